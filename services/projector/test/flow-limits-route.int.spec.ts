// GET /flow/limits over a real dura_flow bucket, written as planners write it: empty before any planner
// declared, then a declared limit with a few admissions, a held slot and a caller waiting in line shows them;
// a tenant's caller sees only its own callers waiting; replicas declaring different figures is a warning.
import { describe, expect, it, vi } from 'vitest';
import { Kvm, type KV } from '@nats-io/kv';
import { BUCKETS, FlowLimitsResponseSchema } from '@dura/contracts';
import {
  declarationKey,
  emptyLimitRecord,
  encodeLimitRecord,
  takeSlot,
  takeTicket,
  type LimitRecord,
  type ModelLimit,
} from '@dura/core';
import { useProjectorApi, tokenAuth } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = { operator: 'operator-0123456789abcdef', acme: 'acme-read-0123456789abcdef' };
const tokenFile = JSON.stringify([
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read'] },
  { name: 'acme', token: TOKENS.acme, tenant: 'acme', scopes: ['read'] },
]);
const mini: ModelLimit = { model: 'openai/gpt-4o-mini', requestsPerMinute: 60, concurrentCalls: 1 };
const b64 = (text: string) => Buffer.from(text).toString('base64url');

// No projector runs: this route reads the flow bucket only.
const sys = useProjectorApi(() => ({ auth: tokenAuth(tokenFile) }), { startProjector: false });
let kv: KV;

async function limits(token = TOKENS.operator) {
  const response = await fetch(`${sys().http.url}/flow/limits`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return FlowLimitsResponseSchema.parse(await response.json());
}

/** What a planner writes: its declaration (`d.<key>.<digest>`) and the limit's record (`l.<key>`). */
async function declare(limit: ModelLimit, digest: string): Promise<void> {
  await kv.put(`d.${b64(declarationKey(limit))}.${digest}`, JSON.stringify({ limit, at: Date.now() }));
}

describe('GET /flow/limits', () => {
  it('answers no limits while no planner has declared or admitted anything (no bucket yet)', async () => {
    const view = await limits();
    expect(view.limits).toEqual([]);
    expect(view.warnings).toEqual([]);
  });

  it('shows a declared limit with its admissions, its slot held and the callers waiting, by tenant', async () => {
    kv = await new Kvm(sys().setup.js).create(BUCKETS.flow, { history: 1 });
    await declare(mini, 'a');
    const now = Date.now();
    let record: LimitRecord = emptyLimitRecord(now);
    for (let i = 0; i < 29; i++)
      record = takeTicket(
        record,
        mini,
        { holder: `r${i}:0`, inputTokens: 1, outputTokens: 1, tenant: 'acme' },
        now,
      ).record;
    record = takeSlot(record, mini, 'r0:0', 60_000, now).record;
    record = takeSlot(record, mini, 'r1:0', 60_000, now).record; // the slot is held: r1 waits for it
    record = {
      ...record,
      line: {
        'w1:0': { tenant: 'acme', priority: 0, since: now, until: now + 60_000 },
        'w2:0': { tenant: 'globex', priority: 0, since: now, until: now + 60_000 },
      },
    };
    await kv.put(`l.${b64(mini.model)}`, JSON.stringify(record));
    await kv.put(
      `t.${b64(mini.model)}.${b64('r5:0')}`,
      JSON.stringify({ at: now, limit: 'requests per minute' }),
    );

    const [row, ...others] = (await limits()).limits;
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      key: 'openai/gpt-4o-mini',
      kind: 'model',
      model: 'openai/gpt-4o-mini',
      declared: { requestsPerMinute: 60, concurrentCalls: 1 },
      slots: { inUse: 1, limit: 1 },
      waiting: { total: 3, queue: 1, line: 2, byTenant: { acme: 1, globex: 1 } },
    });
    // 29 of the 58 admittable (60 less 2 s of headroom), refilling at one a second since.
    expect(row?.available.requests).toBeGreaterThanOrEqual(0.5);
    expect(row?.available.requests).toBeLessThan(0.7);

    const mine = (await limits(TOKENS.acme)).limits[0];
    expect(mine?.waiting).toEqual({ total: 1, queue: 0, line: 1, byTenant: { acme: 1 } });
  });

  it('shows a concurrency key with its limit; a tenant caller does not see keys', async () => {
    const record = {
      ...takeSlot(
        emptyLimitRecord(Date.now()),
        { model: 'k', concurrentCalls: 2 },
        'run_1',
        60_000,
        Date.now(),
      ).record,
      keyLimit: 2,
    };
    // Written as the planner writes records now (the test above writes one as they were before).
    await kv.put(`l.${b64('key:customer:42')}`, encodeLimitRecord(record));
    const key = (await limits()).limits.find((row) => row.kind === 'concurrency key');
    expect(key).toMatchObject({
      concurrencyKey: 'customer:42',
      declared: { concurrentCalls: 2 },
      slots: { inUse: 1, limit: 2 },
    });
    expect((await limits(TOKENS.acme)).limits.map((row) => row.kind)).toEqual(['model']);
  });

  it('warns when replicas declare different figures for a limit', async () => {
    await declare({ ...mini, requestsPerMinute: 120 }, 'b');
    const view = await limits();
    expect(view.warnings).toEqual([
      expect.stringMatching(/^replicas declare different limits for openai\/gpt-4o-mini: /),
    ]);
  });
});
