import { afterAll, beforeAll } from 'vitest';
import type { TestInfra } from '@dura/testing';
import { builtinRegistry, type ToolRegistry } from '@dura/tools';
import { createAgentModel, createModelRouter, createScriptedModel, type AgentRegistry } from '@dura/agents';
import { createPlanner, type Planner, type PlannerDeps } from '../src/index';
import { STREAM_OPTIONS, connect, prepare, testLogger, type Connections } from './support';

/** The two connections of a spec file: the test's own (the streams ensured on it) and the planner's. */
export interface PlannerConnections {
  readonly setup: Connections;
  readonly conn: Connections;
}

export interface PlannerHarness extends PlannerConnections {
  readonly planner: Planner;
}

/** What a spec file sets on its planner, on top of a scripted model, the builtin tools and the test streams. */
export type PlannerOverrides = Partial<Omit<PlannerDeps, keyof Connections>>;

function ready<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what}: only available inside tests, after beforeAll`);
  return value;
}

/**
 * Registers beforeAll/afterAll: the streams ensured on a setup connection and a second connection named
 * `planner`, both closed after the file whether or not the tests passed.
 */
export function usePlannerConnections(infra: () => TestInfra): PlannerConnections {
  let setup: Connections | undefined;
  let conn: Connections | undefined;
  beforeAll(async () => {
    setup = await prepare(infra().nats.url);
    conn = await connect(infra().nats.url, 'planner');
  });
  afterAll(async () => {
    await conn?.close();
    await setup?.close();
  });
  return {
    get setup() {
      return ready(setup, 'usePlannerConnections().setup');
    },
    get conn() {
      return ready(conn, 'usePlannerConnections().conn');
    },
  };
}

/**
 * Registers beforeAll/afterAll: the connections of usePlannerConnections and a planner started on the second
 * one, stopped after the file. `overrides` may be a function, called in beforeAll (after the hooks the file
 * registered before this call), for what is only there then, such as a fake model server's URL.
 */
export function usePlanner(
  infra: () => TestInfra,
  overrides: PlannerOverrides | (() => PlannerOverrides) = {},
): PlannerHarness {
  let planner: Planner | undefined;
  const connections = usePlannerConnections(infra);
  beforeAll(async () => {
    planner = createPlanner({
      ...connections.conn,
      model: createScriptedModel(),
      tools: builtinRegistry(),
      log: testLogger('planner'),
      streams: STREAM_OPTIONS,
      ...(typeof overrides === 'function' ? overrides() : overrides),
    });
    await planner.start();
  });
  afterAll(async () => {
    await planner?.stop();
  });
  return {
    get setup() {
      return connections.setup;
    },
    get conn() {
      return connections.conn;
    },
    get planner() {
      return ready(planner, 'usePlanner().planner');
    },
  };
}

/**
 * A planner's model and tools for registered `agents` (decided by their LLM or script) next to scripted plans;
 * with `approvals`, the router marks the calls of tools that need an approval.
 */
export function agentPlanner(
  agents: AgentRegistry,
  tools: ToolRegistry = builtinRegistry(),
  options: { approvals?: boolean } = {},
): PlannerOverrides {
  const router = { scripted: createScriptedModel(), agents: createAgentModel({ agents, tools }) };
  return { model: createModelRouter(options.approvals ? { ...router, tools } : router), tools };
}
