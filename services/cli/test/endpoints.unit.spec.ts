import { describe, expect, it } from 'vitest';
import type { DevState } from '@dura/client';
import { describeFailure } from '../src/exit-code';
import { describeNatsSource, resolveEndpoints } from '../src/endpoints';
import { StreamUnavailable } from '@dura/event-store';

const dev: DevState = {
  v: 1,
  pid: 42,
  natsUrl: 'nats://127.0.0.1:4223',
  apiUrl: 'http://127.0.0.1:8080',
  consoleUrl: 'http://127.0.0.1:8080/ui/',
  startedAt: '2026-01-01T00:00:00Z',
};
const running = () => [dev];
const none = () => [];
const env = { DURA_DEV_STATE_FILE: '/tmp/dev.json' };

describe('where the CLI finds NATS and the read API', () => {
  it('the running dev stack, when no flag or variable says otherwise', () => {
    expect(resolveEndpoints({}, env, running)).toMatchObject({
      natsUrl: dev.natsUrl,
      apiUrl: dev.apiUrl,
      natsFrom: 'dev',
      apiFrom: 'dev',
      devFile: '/tmp/dev.json',
    });
  });

  it('a flag wins over its variable, and a variable over the dev stack', () => {
    const resolved = resolveEndpoints(
      { nats: 'nats://flag:1' },
      { ...env, NATS_URL: 'nats://env:2', DURA_API_URL: 'http://env:3' },
      running,
    );
    expect(resolved).toMatchObject({
      natsUrl: 'nats://flag:1',
      natsFrom: 'flag',
      apiUrl: 'http://env:3',
      apiFrom: 'env',
    });
  });

  it('the defaults when no dev stack runs, and the message says how to start one', () => {
    const resolved = resolveEndpoints({}, env, none);
    expect(resolved).toMatchObject({ natsUrl: 'nats://127.0.0.1:4222', apiUrl: 'http://127.0.0.1:8080' });
    expect(describeNatsSource(resolved)).toMatch(/is the default: no dev stack is running .*npm run dev/);
    expect(describeNatsSource(resolveEndpoints({}, env, running))).toBe(
      'NATS nats://127.0.0.1:4223 came from the dev stack of process 42 (/tmp/dev.json)',
    );
  });

  it('with two dev stacks running, every URL comes from the newest, and the message names the other', () => {
    const older: DevState = {
      ...dev,
      pid: 41,
      natsUrl: 'nats://127.0.0.1:4300',
      apiUrl: 'http://127.0.0.1:8090',
    };
    const resolved = resolveEndpoints({}, {}, () => [dev, older]);
    expect(resolved).toMatchObject({
      natsUrl: dev.natsUrl,
      apiUrl: dev.apiUrl,
      natsFrom: 'dev',
      apiFrom: 'dev',
    });
    expect(describeNatsSource(resolved)).toMatch(
      /came from the dev stack of process 42 \(.*[/\\]\.dura[/\\]stacks[/\\]42\.json\), the newest of 2 running \(others: process 41 at http:\/\/127\.0\.0\.1:8090; pass --nats\/--api/,
    );
  });

  it('a server without Dura streams is reported as such, with exit 4 and where the URL came from', () => {
    const failure = describeFailure(
      new StreamUnavailable('this NATS server has no Dura streams (JetStream answered "stream not found")'),
    );
    expect(failure).toMatchObject({ code: 4, natsRelated: true });
    expect(failure.lines[0]).toMatch(/has no Dura streams.*\[stream_unavailable\]/);
  });
});
