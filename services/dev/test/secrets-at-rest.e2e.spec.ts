// Issue acceptance (no secret at rest in clear): with the shipped NATS permissions (each service its own user,
// the client user submitting), card tokens given in plans and inputs reach the tool, and are found nowhere a
// deployment keeps or emits bytes: not in any file of the nats-server's store directory (raw or base64), not
// in a pg_dump of the database, not in the services' logs (debug level), not in any exported span. Every copy
// a request makes is covered: the request itself, its copy requeued while its tenant is at its limit, the
// dead letters of refused requests (a plan error, a schema error, a child run given a secret), and their
// messages on `dura.submit`.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDuraClient, type ConnectedDuraClient } from '@dura/client';
import { DeadLetterSchema, STREAMS, SUBJECTS, type DeadLetter } from '@dura/contracts';
import {
  freePort,
  startOtlpReceiver,
  startPaymentWitness,
  useTestInfra,
  type ManagedProcess,
  type OtlpReceiver,
  type PaymentWitness,
} from '@dura/testing';
import { placesOf, filesUnder, pgDump, type Haystack } from './secret-search';
import { connectAs, envOf, securityOf, startSecuredNats, type SecuredNats } from './secured-nats';
import { eventually, startService } from './system';

const SECRET_TOOLS = fileURLToPath(new URL('./fixtures/secret-tools.ts', import.meta.url));
const WITNESS_TOOLS = fileURLToPath(new URL('./fixtures/witness-tools.ts', import.meta.url));
const KEY = `k1:${randomBytes(32).toString('base64')}`;
// Random, so no fixture, default or earlier run can hold them by chance.
const token = (name: string) => `tok_${name}_${randomBytes(12).toString('hex')}`;
const SECRETS = {
  plan: token('plan'),
  input: token('input'),
  refused: token('refused'),
  invalid: token('invalid'),
  conflict: token('conflict'),
  child: token('child'),
};

const infra = useTestInfra({ nats: false });
let nats: SecuredNats;
let receiver: OtlpReceiver;
let witness: PaymentWitness;
let client: ConnectedDuraClient;
const processes: ManagedProcess[] = [];

beforeAll(async () => {
  nats = await startSecuredNats();
  receiver = await startOtlpReceiver();
  witness = await startPaymentWitness();
  const port = await freePort();
  const common = {
    NATS_URL: nats.url,
    DATABASE_URL: infra().db.url,
    PROJECTOR_HTTP_PORT: String(port),
    DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${SECRET_TOOLS}`,
    WITNESS_URL: witness.url,
    DURA_SECRETS_KEY: KEY,
    LOG_LEVEL: 'debug',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    // One run in flight for tenant acme: a second one waits in dura.submit (requeued).
    PLANNER_TENANT_MAX_RUNS: 'acme=1',
    PLANNER_TENANT_LIMIT_POLICY: 'wait',
  };
  processes.push(await startService('planner', { ...common, ...envOf('planner') }));
  processes.push(await startService('tool-gateway', { ...common, ...envOf('gateway') }));
  processes.push(await startService('projector', { ...common, ...envOf('projector') }));
  client = connectDuraClient({
    natsUrl: nats.url,
    apiUrl: `http://127.0.0.1:${port}`,
    security: securityOf('client'),
  });
}, 180_000);

afterAll(async () => {
  await client?.close();
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await Promise.allSettled([receiver?.close(), witness?.close()]);
  await nats?.close();
});

const output = (name: string): string => processes.find((p) => p.name === name)?.output() ?? '';

async function endOf(runId: string): Promise<string[]> {
  const types: string[] = [];
  for await (const event of client.watchRun(runId, { signal: AbortSignal.timeout(90_000) }))
    types.push(event.type);
  return types;
}

async function deadLetters(): Promise<DeadLetter[]> {
  const nc = await connectAs(nats.url, 'admin');
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(STREAMS.deadLetters);
    const letters: DeadLetter[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq += 1) {
      const msg = await jsm.streams.getMessage(STREAMS.deadLetters, { seq }).catch(() => null);
      if (msg) letters.push(DeadLetterSchema.parse(msg.json()));
    }
    return letters;
  } finally {
    await nc.close();
  }
}

/** Publishes a request as the client user without the SDK, which would refuse (or name) it first. */
async function publishAsClient(body: object, msgID: string): Promise<void> {
  const nc = await connectAs(nats.url, 'client');
  try {
    await jetstream(nc).publish(SUBJECTS.submit, JSON.stringify(body), { msgID });
  } finally {
    await nc.close();
  }
}

const payPlan = (secret: string) => ({
  kind: 'scripted' as const,
  steps: [{ tool: 'pay.secret', args: { amount: 100, card: { token: secret } } }],
});

describe('a card token under the shipped NATS permissions', () => {
  it('reaches the tool and is at rest nowhere in clear: NATS store files, pg_dump, logs, spans', async () => {
    // A run of tenant acme holds its only slot until it is signalled.
    await client.submitRun({
      runId: 'rest-holder',
      tenant: 'acme',
      agent: { kind: 'scripted', steps: [{ tool: 'dura.wait_for_signal', args: { name: 'go' } }] },
    });
    await eventually(
      async () =>
        (await client.readEvents('rest-holder')).some((e) => e.type === 'wait_requested') || undefined,
      'the holder run to wait for its signal',
      60_000,
    );
    // The paying run waits in dura.submit behind it: requeued, with its secrets in the plan and the input.
    await client.submitRun({
      runId: 'rest-card',
      tenant: 'acme',
      input: { card: { token: SECRETS.input }, note: 'not secret' },
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'pay.secret', args: { amount: 100, card: { token: SECRETS.plan } } },
          { tool: 'pay.secret', args: { amount: 200, card: '$input.card' } },
        ],
      },
    });
    await eventually(
      () => Promise.resolve(/message waits; requeued/.test(output('planner')) || undefined),
      'the paying run to be requeued while its tenant is at its limit',
      60_000,
    );

    // Refused requests holding secrets: a plan error, a schema error, a child run given a secret.
    await client.submitRun({
      runId: 'rest-refused',
      agent: {
        kind: 'scripted',
        steps: [...payPlan(SECRETS.refused).steps, { tool: 'no.such.tool', args: {} }],
      },
    });
    await publishAsClient(
      { v: 1, runId: 'rest-invalid', tenant: 42, agent: payPlan(SECRETS.invalid) },
      'rest-invalid',
    );
    await client.submitRun({
      runId: 'rest-child',
      agent: {
        kind: 'scripted',
        steps: [{ tool: 'dura.run_agent', args: { agent: payPlan(SECRETS.child) } }],
      },
    });
    // Soft: a refusal that went wrong is reported, and the search below still runs and says where secrets are.
    for (const runId of ['rest-refused', 'rest-invalid', 'rest-child'])
      expect.soft(await endOf(runId), runId).toEqual(['run_rejected']);

    await client.signal('rest-holder', 'go', { payload: {} });
    expect((await endOf('rest-holder')).at(-1)).toBe('run_completed');
    const types = await endOf('rest-card');
    expect(types.at(-1), types.join(', ')).toBe('run_completed');

    // The tool got the clear values (the witness saw them as the Authorization header).
    const requested = (await client.readEvents('rest-card')).flatMap((e) =>
      e.type === 'tool_call_requested' ? [e.data] : [],
    );
    expect(requested.map((call) => witness.authorizations(call.idempotencyKey))).toEqual([
      [`Bearer ${SECRETS.plan}`],
      [`Bearer ${SECRETS.input}`],
    ]);
    // The same run id again, with another card: refused as a conflict (under its own msg-id, so JetStream
    // does not drop it as a duplicate).
    await publishAsClient({ v: 1, runId: 'rest-card', agent: payPlan(SECRETS.conflict) }, 'rest-card-again');
    const conflict = await eventually(
      async () => (await deadLetters()).find((l) => l.error.code === 'run_id_conflict'),
      'the conflicting request to be dead-lettered',
      60_000,
    );
    expect.soft(conflict.payload).toContain('[secret]');
    // Each refusal is dead-lettered with the request redacted, and says why.
    const letters = await deadLetters();
    const letterOf = (runId: string) => letters.find((l) => l.runId === runId);
    expect.soft(letterOf('rest-refused')?.error.code).toBe('unknown_tool');
    expect.soft(letterOf('rest-invalid')?.error.code).toBe('invalid_request');
    expect.soft(letterOf('rest-child')?.error.code).toBe('secret_in_child_plan');
    for (const runId of ['rest-refused', 'rest-invalid', 'rest-child'])
      expect.soft(letterOf(runId)?.payload, runId).toContain('[secret]');
    // Every span of both calls is exported before anything is searched.
    await receiver.waitForSpans(
      (spans) => spans.filter((s) => s.name === 'dura.tool.call pay.secret').length >= 2,
      30_000,
    );

    // The search is real: each haystack is read, and does hold what is not secret.
    const storeFiles = await eventually(
      async () => {
        const files = await filesUnder(nats.server.storeDir);
        return files.some((f) => f.bytes.includes('not secret')) ? files : undefined;
      },
      "the run's input to reach the NATS store files",
      30_000,
    );
    const dump = await pgDump(infra().db.url);
    expect(dump.bytes.includes('not secret'), 'the dump holds the run').toBe(true);
    const logs: Haystack[] = processes.map((p) => ({
      where: `${p.name} output`,
      bytes: Buffer.from(p.output()),
    }));
    expect(output('planner')).toMatch(/run_requested|planner started/);
    const spans: Haystack[] = receiver
      .spans()
      .map((span) => ({ where: `span ${span.name}`, bytes: Buffer.from(JSON.stringify(span)) }));
    expect(spans.length).toBeGreaterThan(5);

    const found = Object.fromEntries(
      Object.entries(SECRETS).map(([name, secret]) => [
        name,
        [storeFiles, [dump], logs, spans].flatMap((haystacks) => placesOf(haystacks, secret)),
      ]),
    );
    expect(found).toEqual(Object.fromEntries(Object.keys(SECRETS).map((name) => [name, []])));
    // Every erase was allowed: nothing was left behind with an error.
    expect(output('planner')).not.toMatch(/could not erase|Permissions Violation/);
  });

  it('lets the planner erase messages of DURA_REQUESTS and delete nothing else', async () => {
    const nc = await connectAs(nats.url, 'planner');
    try {
      const jsm = await jetstreamManager(nc);
      const NONE = 999_999_999;
      // Allowed: the server itself answers (no such message), where a denied request gets a permissions violation.
      const allowed = await jsm.streams.deleteMessage(STREAMS.requests, NONE, true).catch((e: Error) => e);
      expect(allowed).toBeInstanceOf(JetStreamApiError);
      expect(String(allowed)).not.toMatch(/Permissions Violation/);
      const others = [
        STREAMS.runs,
        STREAMS.tasks,
        STREAMS.deadLetters,
        'KV_dura_snapshots',
        'OBJ_dura_payloads',
      ];
      for (const stream of others) {
        const denied = await jsm.streams.deleteMessage(stream, 1, true).catch((e: Error) => e);
        expect(`${String(denied)} ${String((denied as Error).cause)}`, stream).toMatch(
          /Permissions Violation/,
        );
      }
      const purge = await jsm.streams.purge(STREAMS.requests).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(`${purge?.message} ${String(purge?.cause)}`).toMatch(/Permissions Violation/);
    } finally {
      await nc.close();
    }
  });
});
