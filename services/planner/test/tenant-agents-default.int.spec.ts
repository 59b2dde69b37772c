// The planner service as its configuration builds it, with PLANNER_TENANT_AGENTS unset (as a deployment that
// never set it): a deployment without tenants runs as before, while a run of any named tenant is refused,
// naming the missing setting, instead of every tenant starting every agent.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RUN_REQUEST_VERSION, SUBJECTS, type RunEvent } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { BUILTIN_TOOLS, ToolRegistry } from '@dura/tools';
import { buildPlanner, loadPlannerConfig, type Planner } from '../src/index';
import { eventually, testLogger } from './support';
import { usePlannerConnections } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlannerConnections(infra);
let planner: Planner | undefined;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dura-tenant-agents-'));
  const agents = join(dir, 'agents.json');
  const scripted = (steps: object[]) => ({ provider: 'scripted', steps });
  writeFileSync(
    agents,
    JSON.stringify({
      agents: [
        {
          name: 'support',
          version: '1',
          model: scripted([{ tool: 'echo', args: { hi: 1 } }]),
          tools: ['echo'],
        },
        {
          name: 'delegator',
          version: '1',
          model: scripted([{ tool: 'dura.run_agent', args: { agent: 'support' } }]),
          tools: [],
        },
      ],
    }),
  );
  const config = loadPlannerConfig({ NATS_URL: infra().nats.url, DURA_AGENTS: agents });
  expect(config.PLANNER_TENANT_AGENTS).toBeUndefined();
  planner = await buildPlanner({
    config,
    nats: env.conn,
    tools: new ToolRegistry([...BUILTIN_TOOLS]),
    secrets: undefined,
    log: testLogger('planner'),
  });
  await planner.start();
});

afterAll(async () => {
  await planner?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function submit(runId: string, agent: string, tenant?: string): Promise<void> {
  const request = {
    v: RUN_REQUEST_VERSION,
    runId,
    agent: { kind: 'agent', name: agent },
    ...(tenant ? { tenant } : {}),
  };
  await env.setup.js.publish(SUBJECTS.submit, JSON.stringify(request), { msgID: runId });
}

const firstEvent = (runId: string): Promise<RunEvent> =>
  eventually(async () => (await env.setup.store.read(runId))[0], `the first event of ${runId}`);

describe('PLANNER_TENANT_AGENTS unset', () => {
  it('lets tenant default (a deployment without tenants) start its agents, children included', async () => {
    await submit('dflt-1', 'delegator');
    expect((await firstEvent('dflt-1')).type).toBe('run_requested');
    const child = await eventually(async () => {
      const log = await env.setup.store.read('dflt-1');
      const asked = log.find((e) => e.type === 'child_run_requested');
      return asked?.type === 'child_run_requested' ? asked.data.childRunId : undefined;
    }, 'the delegating run to ask for its child');
    // Its child (tenant default too) starts: its tool call is requested (no gateway runs here).
    await eventually(async () => {
      const log = await env.setup.store.read(child);
      expect(log[0]?.type).toBe('run_requested');
      return log.some((e) => e.type === 'tool_call_requested') ? true : undefined;
    }, 'the child to call its tool');
  });

  it('refuses every agent to any other tenant, naming the missing setting', async () => {
    await submit('globex-1', 'support', 'globex');
    const first = await firstEvent('globex-1');
    expect(first.type).toBe('run_rejected');
    const error = (first as Extract<RunEvent, { type: 'run_rejected' }>).data.error;
    expect(error.code).toBe('agent_not_allowed');
    expect(error.message).toMatch(
      /tenant globex may not start agent support.*PLANNER_TENANT_AGENTS is not set, so only tenant default may start agents/,
    );
  });
});
