import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { OPEN_CALLER, type Caller } from '../src/index';
import { createStreamSlots } from '../src/stream-slots';

const caller = (name: string): Caller => ({ name, tenant: 't1', scopes: new Set(['read']), kind: 'token' });
const from = (address: string) => ({ socket: { remoteAddress: address } }) as unknown as IncomingMessage;

describe('live stream slots', () => {
  it('refuses a credential over its limit with 429, Retry-After and what to do, and frees a slot on release', () => {
    const slots = createStreamSlots({ perToken: 2, total: 10 });
    const held = [slots.acquire(caller('a'), from('1.1.1.1')), slots.acquire(caller('a'), from('2.2.2.2'))];
    const refused = slots.acquire(caller('a'), from('3.3.3.3'));
    expect(refused).toEqual({
      refused: {
        status: 429,
        headers: { 'retry-after': '5' },
        body: { error: { code: 'too_many_streams', message: expect.stringMatching(/at most 2.*close one/) } },
      },
    });
    expect('release' in slots.acquire(caller('b'), from('1.1.1.1'))).toBe(true);
    const first = held[0]!;
    if ('release' in first) {
      first.release();
      first.release(); // twice is once
    }
    expect(slots.openStreams()).toBe(2);
    expect('release' in slots.acquire(caller('a'), from('1.1.1.1'))).toBe(true);
    expect('refused' in slots.acquire(caller('a'), from('1.1.1.1'))).toBe(true);
  });

  it('refuses anyone over the total, naming the setting', () => {
    const slots = createStreamSlots({ perToken: 5, total: 2 });
    slots.acquire(caller('a'), from('1.1.1.1'));
    slots.acquire(caller('b'), from('1.1.1.1'));
    const refused = slots.acquire(caller('c'), from('1.1.1.1'));
    expect(refused).toMatchObject({
      refused: {
        status: 429,
        body: { error: { code: 'streams_exhausted', message: /PROJECTOR_SSE_MAX_TOTAL/ } },
      },
    });
  });

  it('without credentials configured, callers are counted by address', () => {
    const slots = createStreamSlots({ perToken: 1, total: 10 });
    expect('release' in slots.acquire(OPEN_CALLER, from('10.0.0.1'))).toBe(true);
    expect('release' in slots.acquire(OPEN_CALLER, from('10.0.0.2'))).toBe(true);
    expect('refused' in slots.acquire(OPEN_CALLER, from('10.0.0.1'))).toBe(true);
  });
});
