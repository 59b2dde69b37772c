// POST /runs with `dedupe` (skip-if-running) and `debounce`: every answer says what happened (started,
// debounced and until when, or skipped because which run is in flight), never a bare 2xx that started nothing.
// A debounced request is handed to a planner (request/reply on dura.gate.runs), which seals it before its
// window keeps it: here the planner's side of that door runs in the test, with a stand-in seal. The window
// itself is ended by the planners (services/planner/test/trigger-gates.int.spec.ts, and
// services/dev/test/run-gates.e2e.spec.ts end to end); here its record is read back.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuraError, GateRecordSchema } from '@dura/contracts';
import { BUCKETS } from '@dura/contracts';
import { createRunGates, gateEntryName, serveGateAsks, type GateDoor } from '@dura/event-store';
import { Kvm } from '@nats-io/kv';
import { tenantPrefix } from '../src/tenant-ids';
import { RunScript, testLogger } from './support';
import { useProjectorApi, tokenAuth, submitted } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKEN = 'acme-submit-0123456789abcdef';
const tokenFile = JSON.stringify([
  { name: 'acme', token: TOKEN, tenant: 'acme', scopes: ['read', 'submit'] },
]);

const sys = useProjectorApi(() => ({ auth: tokenAuth(tokenFile) }));

async function submit(body: unknown, key?: string) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${TOKEN}`,
  };
  if (key !== undefined) headers['idempotency-key'] = key;
  const response = await fetch(`${sys().http.url}/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown> & { error?: { code: string; message: string } },
  };
}

/** Message ids of the requests published on `dura.submit`. */
async function publishedIds(): Promise<string[]> {
  return (await submitted(sys().setup)).map((msg) => msg.id);
}

const plan = (n: number) => ({ agent: { kind: 'scripted', steps: [] }, input: { n } });

describe('POST /runs with dedupe skip-if-running', () => {
  it('starts the first, answers 200 skipped naming the run in flight, and starts again once it ended', async () => {
    const dedupe = { key: 'nightly-report', policy: 'skip-if-running' };
    const first = await submit({ ...plan(1), dedupe });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ outcome: 'started', duplicate: false });
    const running = first.body['runId'] as string;

    const second = await submit({ ...plan(2), dedupe });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ outcome: 'skipped', runId: running, key: 'nightly-report' });
    expect(second.body['reason']).toContain(`run ${running} of key "nightly-report" is in flight`);
    expect((await publishedIds()).filter((id) => id !== running)).toEqual([]);

    // The run ends (as the projection sees it): the next request starts.
    await sys().project([new RunScript(running).request([], { tenant: 'acme' }).start().finish('done')]);
    const third = await submit({ ...plan(4), dedupe }, 'report-4');
    expect(third.status).toBe(202);
    expect(third.body).toMatchObject({ outcome: 'started', runId: `${tenantPrefix('acme')}-report-4` });
    expect(await publishedIds()).toContain(third.body['runId']);
    // The same key and body again (a caller retrying its own start): the ordinary duplicate answer, not a skip.
    const retried = await submit({ ...plan(4), dedupe }, 'report-4');
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ outcome: 'started', runId: third.body['runId'], duplicate: true });
  });

  it('refuses debounce and dedupe of different keys, and a debounce with an Idempotency-Key', async () => {
    const mixed = await submit({
      ...plan(1),
      debounce: { key: 'a', windowMs: 1000 },
      dedupe: { key: 'b', policy: 'skip-if-running' },
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error?.message).toContain('differ');
    const keyed = await submit({ ...plan(1), debounce: { key: 'a', windowMs: 1000 } }, 'my-key');
    expect(keyed.status).toBe(400);
    expect(keyed.body.error?.message).toContain('leave out runId and the Idempotency-Key');
    const policy = await submit({ ...plan(1), dedupe: { key: 'a', policy: 'skip-always' } });
    expect(policy.status).toBe(400);
  });
});

describe('POST /runs with debounce', () => {
  let door: GateDoor | undefined;
  // The planner's side: "seals" by marking the input, and refuses what it could not seal.
  const openDoor = () =>
    serveGateAsks({
      nc: sys().setup.nc,
      gates: createRunGates({ js: sys().setup.js, phaseOf: () => Promise.resolve('unseen') }),
      log: testLogger('planner-door'),
      seal: (request) => {
        if (JSON.stringify(request.input).includes('unsealable'))
          throw new DuraError(
            'secrets_key_missing',
            'the run input has a secret but no secrets key is configured',
          );
        return { ...request, input: { sealed: request.input ?? null } };
      },
    });
  // Each ask goes from the projector's connection: it finds the door once the server has its subscription.
  beforeAll(async () => {
    door = openDoor();
    await door.ready;
  });
  afterAll(async () => {
    await door?.stop();
  });

  it('answers 202 debounced with the window run id and end; the window keeps the last request', async () => {
    const debounce = { key: 'customer-42', windowMs: 60_000 };
    const answers = [];
    for (const n of [1, 2, 3]) answers.push(await submit({ ...plan(n), debounce }));
    const runIds = new Set(answers.map((a) => a.body['runId']));
    expect(runIds.size).toBe(1);
    const [runId] = [...runIds] as string[];
    expect(runId).toMatch(new RegExp(`^${tenantPrefix('acme')}-deb-[0-9a-f]{12}-[0-9a-z]+$`));
    expect(answers.map((a) => [a.status, a.body['outcome'], a.body['requests']])).toEqual([
      [202, 'debounced', 1],
      [202, 'debounced', 2],
      [202, 'debounced', 3],
    ]);
    expect(Date.parse(answers[2]!.body['fireAt'] as string)).toBeGreaterThan(Date.now() + 50_000);
    expect(await publishedIds()).not.toContain(runId);
    const kv = await new Kvm(sys().setup.js).open(BUCKETS.runGates);
    const entry = await kv.get(gateEntryName('runs:acme', 'customer-42'));
    const record = GateRecordSchema.parse(entry?.json());
    expect(record.window).toMatchObject({
      runId,
      events: 3,
      request: { runId, tenant: 'acme', input: { sealed: { n: 3 } } },
    });
    expect(record.window?.request).not.toHaveProperty('debounce');
  });

  it('a request the planner cannot seal is refused with its reason, and kept nowhere', async () => {
    const debounce = { key: 'customer-43', windowMs: 60_000 };
    const answer = await submit({ ...plan(1), input: { card: 'unsealable' }, debounce });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'secrets_key_missing' });
    expect(answer.body.error?.message).toContain(
      'the debounced request was not kept: the run input has a secret',
    );
    const kv = await new Kvm(sys().setup.js).open(BUCKETS.runGates);
    expect(await kv.get(gateEntryName('runs:acme', 'customer-43'))).toBeNull();
  });

  it('with no planner to answer: 503 that says so and what to do, and nothing kept', async () => {
    await door?.stop();
    door = undefined;
    try {
      const answer = await submit({ ...plan(1), debounce: { key: 'customer-44', windowMs: 60_000 } });
      expect(answer.status).toBe(503);
      expect(answer.body.error?.code).toBe('gate_unanswered');
      expect(answer.body.error?.message).toMatch(/no planner listens on "dura\.gate\.runs".*Start a planner/);
      const kv = await new Kvm(sys().setup.js).open(BUCKETS.runGates);
      expect(await kv.get(gateEntryName('runs:acme', 'customer-44'))).toBeNull();
    } finally {
      door = openDoor();
      await door.ready;
    }
  });

  it('a caller may not choose a window run id', async () => {
    const taken = await submit(plan(1), 'deb-0123456789ab-x');
    expect(taken.status).toBe(400);
    expect(taken.body.error?.code).toBe('reserved_run_id');
  });
});
