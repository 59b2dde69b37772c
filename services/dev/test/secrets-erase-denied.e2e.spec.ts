// A deployment whose NATS permissions do not let the planner erase requests (the permission set before it
// was granted): a request holding secrets still runs, and the erase it could not do is an error log line
// naming the stream, the sequence and the permission to grant, and a metric, never only a warning.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDuraClient, type ConnectedDuraClient } from '@dura/client';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { envOf, securityOf, startSecuredNats, type SecuredNats } from './secured-nats';
import { eventually, startService } from './system';

const SECRET_TOOLS = fileURLToPath(new URL('./fixtures/secret-tools.ts', import.meta.url));
const SECRET = `tok_denied_${randomBytes(12).toString('hex')}`;
const ERASE = '"$JS.API.STREAM.MSG.DELETE.DURA_REQUESTS"';

const infra = useTestInfra({ nats: false });
let nats: SecuredNats;
let planner: ManagedProcess;
let client: ConnectedDuraClient;

beforeAll(async () => {
  // The planner's one message-delete permission taken away: its erase is refused like any unlisted subject.
  nats = await startSecuredNats({ patchPermissions: (conf) => conf.replace(ERASE, '') });
  planner = await startService('planner', {
    NATS_URL: nats.url,
    DATABASE_URL: infra().db.url,
    ...envOf('planner'),
    DURA_TOOLS_MODULES: SECRET_TOOLS,
    DURA_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}`,
    METRICS_PORT: '0',
  });
  client = connectDuraClient({ natsUrl: nats.url, security: securityOf('client') });
}, 180_000);

afterAll(async () => {
  await client?.close();
  await planner?.kill('SIGTERM');
  await nats?.close();
});

describe('an erase the permissions refuse', () => {
  it('is an error log naming stream, sequence and permission, and counts dura_secret_erase_failures', async () => {
    await client.submitRun({
      runId: 'denied-card',
      agent: {
        kind: 'scripted',
        steps: [{ tool: 'pay.secret', args: { amount: 100, card: { token: SECRET } } }],
      },
    });
    const line = await eventually(
      () =>
        Promise.resolve(
          planner
            .output()
            .split('\n')
            .find((l) => l.includes('could not erase')),
        ),
      'the planner to report the erase it could not do',
      60_000,
    );
    expect(line).toMatch(/"level":("error"|50)/);
    expect(line).toContain('DURA_REQUESTS #1');
    expect(line).toContain('$JS.API.STREAM.MSG.DELETE.DURA_REQUESTS');
    expect(planner.output()).not.toContain(SECRET);
    // The run was still recorded, sealed: the failed erase never fails the request.
    await eventually(
      async () =>
        (await client.readEvents('denied-card')).some((e) => e.type === 'run_requested') || undefined,
      'the run to be recorded',
      30_000,
    );

    const url = /metrics listening.*?(http:\/\/[^"\s]+)/.exec(planner.output())?.[1];
    expect(url, 'the planner logs its metrics URL').toBeDefined();
    const metrics = await (await fetch(url!)).text();
    expect(metrics).toMatch(/dura_secret_erase_failures_total\{[^}]*stream="DURA_REQUESTS"[^}]*\} 1\b/);
  });
});
