import { PermissionViolationError, TimeoutError } from '@nats-io/nats-core';
import { StreamUnavailable } from '@dura/event-store';
import { describe, expect, it } from 'vitest';
import { doorHint, doorWrite } from '../src/command-door';

const target = { subject: 'dura.submit', what: 'the request of run r1' };
const failing = (err: Error) => () => Promise.reject(err);

describe('the HTTP command door', () => {
  it('answers a write NATS denies with what went wrong and the one hint', async () => {
    const denied = new PermissionViolationError('Permissions Violation', 'publish', 'dura.submit');
    // nats.js may wrap the violation (a denied request): the door looks through the causes.
    for (const err of [denied, new Error('request failed', { cause: denied })]) {
      const thrown = await doorWrite(target, failing(err)).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(StreamUnavailable);
      expect((thrown as StreamUnavailable).message).toBe(
        `NATS denied the projector's user publishing to "dura.submit", so the request of run r1 was not ` +
          `accepted: ${doorHint('dura.submit')}`,
      );
      expect((thrown as StreamUnavailable).retryable).toBe(true);
    }
  });

  it('answers a write NATS never acknowledges with the same hint', async () => {
    const thrown = await doorWrite(target, failing(new TimeoutError())).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(StreamUnavailable);
    expect((thrown as StreamUnavailable).message).toBe(
      `NATS did not acknowledge the write to "dura.submit" in time, so the request of run r1 was not accepted: ` +
        doorHint('dura.submit'),
    );
  });

  it('says which permission to check, where it is set, and that a retry is safe', () => {
    expect(doorHint('$KV.dura_schedules.>')).toBe(
      `check that the projector's NATS user may publish to "$KV.dura_schedules.>" (the write door of ` +
        'DURA_PROJECTOR in deploy/nats/permissions.conf; docs/security/nats.md), then retry the same request ' +
        '(it is deduplicated)',
    );
  });

  it('leaves any other failure to the route, and passes a success through', async () => {
    const other = new Error('stream not found');
    await expect(doorWrite(target, failing(other))).rejects.toBe(other);
    const mapped = new Error('mapped');
    await expect(doorWrite(target, failing(other), () => mapped)).rejects.toBe(mapped);
    await expect(doorWrite(target, () => Promise.resolve(7))).resolves.toBe(7);
  });
});
