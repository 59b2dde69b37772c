import { newEvent, type NewEvent } from '@dura/contracts';
import { TEST_STREAM_OPTIONS, testLogger } from '@dura/service-kit/testing';
import { ToolRegistry, type ToolDefinition } from '@dura/tools';
import { afterAll, beforeAll } from 'vitest';
import { spawnTsEntry, type ManagedProcess, type TestInfra } from '@dura/testing';
import { createToolGateway, type GatewayDeps, type Relay, type ToolGateway } from '../src/index';
import { connect, prepare, type Connections } from './support';

export interface GatewayUnderTest {
  /** The test's own connection, for publishing tasks and reading the log and the database. */
  readonly setup: Connections;
  readonly gateway: ToolGateway;
}

export interface ConnectionsUnderTest {
  /** The test's own connection (the streams ensured and the database migrated), for tasks, logs and rows. */
  readonly setup: Connections;
  /** Opens another connection named `name`; closed after the file, after the file's own afterAll hooks. */
  open(name: string): Promise<Connections>;
}

/**
 * Registers beforeAll/afterAll in the calling spec file: the setup connection, and the connections `open`
 * makes, all closed afterwards whether the tests passed or not. Call it before the hooks that use them.
 */
export function useConnections(infra: () => TestInfra): ConnectionsUnderTest {
  let setup: Connections | undefined;
  const opened: Connections[] = [];
  beforeAll(async () => {
    setup = await prepare(infra().nats.url, infra().db.url);
  });
  afterAll(async () => {
    await Promise.allSettled(opened.map((conn) => conn.close()));
    await setup?.close();
  });
  return {
    get setup() {
      if (!setup) throw new Error('useConnections(): the setup connection is only available inside tests');
      return setup;
    },
    async open(name) {
      const conn = await connect(infra().nats.url, infra().db.url, name);
      opened.push(conn);
      return conn;
    },
  };
}

type GatewayOptions = Partial<
  Pick<GatewayDeps, 'maxAttempts' | 'relayPollMs' | 'timerPollMs' | 'payloadThresholdBytes' | 'concurrency'>
>;

function startableGateway(
  conn: Connections,
  tools: readonly ToolDefinition[],
  name: string,
  options: GatewayOptions,
) {
  return createToolGateway({
    ...conn,
    tools: new ToolRegistry(tools),
    log: testLogger(name),
    relayPollMs: 50,
    streams: TEST_STREAM_OPTIONS,
    ...options,
  });
}

/**
 * Registers beforeAll/afterAll in the calling spec file: a setup connection, and one gateway with `tools` on
 * its own connection, started; everything is stopped and closed afterwards, whether the tests passed or not.
 */
export function useGateway(
  infra: () => TestInfra,
  tools: readonly ToolDefinition[],
  options: Omit<GatewayOptions, 'concurrency'> = {},
): GatewayUnderTest {
  const connections = useConnections(infra);
  let gateway: ToolGateway | undefined;
  beforeAll(async () => {
    gateway = startableGateway(await connections.open('gateway'), tools, 'tool-gateway', options);
    await gateway.start();
  });
  afterAll(async () => {
    await gateway?.stop();
  });
  return {
    get setup() {
      return connections.setup;
    },
    get gateway() {
      if (!gateway) throw new Error('useGateway(): the gateway is only available inside tests');
      return gateway;
    },
  };
}

/**
 * Registers beforeAll/afterAll in the calling spec file: a setup connection, and a gateway replica per entry
 * of `tools` (replica i with those tools on its own connection `gateway-<i>`), all started together; stopped
 * and closed afterwards, whether the tests passed or not.
 */
export function useGatewayReplicas(
  infra: () => TestInfra,
  tools: readonly (readonly ToolDefinition[])[],
  options: GatewayOptions = {},
): { readonly setup: Connections } {
  const connections = useConnections(infra);
  const gateways: ToolGateway[] = [];
  beforeAll(async () => {
    for (const [i, own] of tools.entries())
      gateways.push(
        startableGateway(await connections.open(`gateway-${i}`), own, `tool-gateway-${i}`, options),
      );
    await Promise.all(gateways.map((gateway) => gateway.start()));
  });
  afterAll(async () => {
    await Promise.allSettled(gateways.map((gateway) => gateway.stop()));
  });
  return {
    get setup() {
      return connections.setup;
    },
  };
}

/**
 * Registers an afterAll in the calling spec file that kills every gateway process the returned `start`
 * spawned, whether the tests passed or not. `start` runs the gateway's main on the file's servers (JSON logs
 * at info, built-in tools only, `env` on top) and resolves once the gateway has started, within `startMs`.
 */
export function useGatewayProcesses(
  infra: () => TestInfra,
): (name: string, env: Record<string, string | undefined>, startMs: number) => Promise<ManagedProcess> {
  const processes: ManagedProcess[] = [];
  afterAll(async () => {
    await Promise.allSettled(processes.map((proc) => proc.kill()));
  });
  return async (name, env, startMs) => {
    const proc = spawnTsEntry({
      name,
      entry: 'services/tool-gateway/src/main.ts',
      env: {
        NATS_URL: infra().nats.url,
        DATABASE_URL: infra().db.url,
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        DURA_TOOLS_MODULES: undefined,
        ...env,
      },
    });
    processes.push(proc);
    await proc.waitForOutput(/tool gateway started/, startMs);
    return proc;
  };
}

/** The observation of call `n` of `runId` (result `{ n }`) with msg-id `msgId`, as a relay test queues it. */
export function observation(runId: string, msgId: string, n: number): NewEvent {
  return newEvent(
    'tool_call_completed',
    {
      callId: `call-${n}`,
      idempotencyKey: `${runId}:${n}`,
      result: { n },
      attempt: 1,
      deduped: false,
      durationMs: 1,
    },
    { id: msgId, runId, ts: new Date().toISOString(), correlationId: runId },
  );
}

/**
 * Registers beforeAll/afterAll in the calling spec file: the connections of useConnections, and an afterAll
 * that first stops every relay put in `running`.
 */
export function useRelays(infra: () => TestInfra): ConnectionsUnderTest & { readonly running: Relay[] } {
  const connections = useConnections(infra);
  const running: Relay[] = [];
  afterAll(async () => {
    await Promise.allSettled(running.map((relay) => relay.stop()));
  });
  return {
    get setup() {
      return connections.setup;
    },
    open: (name) => connections.open(name),
    running,
  };
}
