// The stack of the secrets-at-rest test: a nats-server with the shipped permissions (each service its own
// user), a gateway, a projector and a planner that a test may replace (inline plans off, then on), the
// payment witness and an OTLP receiver; and where the test looks for secrets afterwards.
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll } from 'vitest';
import { connectDuraClient, type ConnectedDuraClient } from '@dura/client';
import { DeadLetterSchema, STREAMS, type DeadLetter } from '@dura/contracts';
import {
  freePort,
  startOtlpReceiver,
  startPaymentWitness,
  useTestInfra,
  type ManagedProcess,
  type OtlpReceiver,
  type PaymentWitness,
} from '@dura/testing';
import { filesUnder, pgDump, placesOf, type Haystack } from './secret-search';
import { connectAs, envOf, securityOf, startSecuredNats, type SecuredNats } from './secured-nats';
import { eventually, startService } from './system';

const SECRET_TOOLS = fileURLToPath(new URL('./fixtures/secret-tools.ts', import.meta.url));
const WITNESS_TOOLS = fileURLToPath(new URL('./fixtures/witness-tools.ts', import.meta.url));
export const SECRET_AGENTS = fileURLToPath(new URL('./fixtures/secret-agents.ts', import.meta.url));

export interface SecretsStack {
  nats: SecuredNats;
  witness: PaymentWitness;
  receiver: OtlpReceiver;
  client: ConnectedDuraClient;
  apiUrl: string;
  /** Stops the running planner (if any) and starts one with `env` on top of the common settings. */
  startPlanner(env: Record<string, string>): Promise<ManagedProcess>;
  /** Everything the services have printed, every planner included. */
  output(name: 'planner' | 'tool-gateway' | 'projector'): string;
  /** The event types of a run up to its end. */
  endOf(runId: string): Promise<string[]>;
  deadLetters(): Promise<DeadLetter[]>;
  /** Publishes as the client user without the SDK, which would refuse (or name) the request first. */
  publishAsClient(subject: string, body: unknown, msgID: string): Promise<void>;
  /** Where each secret is found in clear: NATS store files, pg_dump, the services' output, the spans. */
  search(secrets: Record<string, string>): Promise<Record<string, string[]>>;
}

export function useSecretsStack(key: string): () => SecretsStack {
  const infra = useTestInfra({ nats: false });
  let stack: SecretsStack | undefined;
  const processes: ManagedProcess[] = [];
  let planner: ManagedProcess | undefined;
  let nats: SecuredNats | undefined;
  let receiver: OtlpReceiver | undefined;
  let witness: PaymentWitness | undefined;
  let client: ConnectedDuraClient | undefined;

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
      DURA_SECRETS_KEY: key,
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    processes.push(await startService('tool-gateway', { ...common, ...envOf('gateway') }));
    processes.push(await startService('projector', { ...common, ...envOf('projector') }));
    const apiUrl = `http://127.0.0.1:${port}`;
    client = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('client') });
    const handles = { nats, witness, receiver, client };
    stack = {
      ...handles,
      apiUrl,
      async startPlanner(env) {
        await planner?.kill('SIGTERM');
        planner = await startService('planner', { ...common, ...envOf('planner'), ...env });
        processes.push(planner);
        return planner;
      },
      output: (name) =>
        processes
          .filter((p) => p.name === name)
          .map((p) => p.output())
          .join('\n'),
      async endOf(runId) {
        const types: string[] = [];
        for await (const event of handles.client.watchRun(runId, { signal: AbortSignal.timeout(90_000) }))
          types.push(event.type);
        return types;
      },
      deadLetters: () => deadLettersOf(handles.nats.url),
      async publishAsClient(subject, body, msgID) {
        const nc = await connectAs(handles.nats.url, 'client');
        try {
          await jetstream(nc).publish(subject, JSON.stringify(body), { msgID });
        } finally {
          await nc.close();
        }
      },
      async search(secrets) {
        // The search is real: each haystack is read, and does hold what is not secret.
        const storeFiles = await eventually(
          async () => {
            const files = await filesUnder(handles.nats.server.storeDir);
            return files.some((f) => f.bytes.includes('not secret')) ? files : undefined;
          },
          "the runs' input to reach the NATS store files",
          30_000,
        );
        // The projector writes the runs' rows behind the log: wait until the dump holds their input.
        const dump = await eventually(
          async () => {
            const taken = await pgDump(infra().db.url);
            return taken.bytes.includes('not secret') ? taken : undefined;
          },
          "the runs' input to reach the projected rows in the database dump",
          60_000,
        );
        const logs: Haystack[] = processes.map((p, i) => ({
          where: `${p.name} #${i} output`,
          bytes: Buffer.from(p.output()),
        }));
        const spans: Haystack[] = handles.receiver
          .spans()
          .map((span) => ({ where: `span ${span.name}`, bytes: Buffer.from(JSON.stringify(span)) }));
        if (spans.length <= 5) throw new Error(`only ${spans.length} spans were exported`);
        return Object.fromEntries(
          Object.entries(secrets).map(([name, secret]) => [
            name,
            [storeFiles, [dump], logs, spans].flatMap((haystacks) => placesOf(haystacks, secret)),
          ]),
        );
      },
    };
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
    await Promise.allSettled([receiver?.close(), witness?.close()]);
    await nats?.close();
  });

  return () => {
    if (!stack) throw new Error('the secrets stack is not started (beforeAll failed)');
    return stack;
  };
}

async function deadLettersOf(natsUrl: string): Promise<DeadLetter[]> {
  const nc = await connectAs(natsUrl, 'admin');
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
