import { describe, expect, it } from 'vitest';
import { RUN_REQUEST_VERSION, type RunRequest } from '@dura/contracts';
import { loadPlannerConfig } from '../src/config';
import {
  authorizeRequest,
  parseInlineTools,
  parseTenantAgents,
  UNSET_TENANT_AGENTS,
  type ToolAuthorization,
  type VersionOf,
} from '../src/tool-authorization';

const inline = (steps: unknown[], tenant?: string): RunRequest =>
  ({
    v: RUN_REQUEST_VERSION,
    agent: { kind: 'scripted', steps },
    ...(tenant ? { tenant } : {}),
  }) as RunRequest;
const agent = (name: string, tenant?: string, version?: string): RunRequest => ({
  v: RUN_REQUEST_VERSION,
  agent: { kind: 'agent', name, ...(version ? { version } : {}) },
  ...(tenant ? { tenant } : {}),
});
const pay = { tool: 'payments.charge', args: { amount: 100 } };

/** Given a policy, when a request arrives, then this is the verdict. */
function given(policy: ToolAuthorization, versionOf?: VersionOf) {
  return { when: (request: RunRequest) => authorizeRequest(policy, request, versionOf) };
}

describe('tool authorization: inline plans', () => {
  it('refuses an inline plan when inline plans are off, naming the setting that allows them', () => {
    const verdict = given({ inlinePlans: false }).when(inline([pay]));
    expect(verdict?.code).toBe('inline_plans_disabled');
    expect(verdict?.message).toMatch(
      /inline scripted plans are off on this deployment.*run a registered agent or set DURA_INLINE_PLANS=true/,
    );
  });

  it('refuses a registered agent run whose request hides an inline child plan when inline plans are off', () => {
    const child = { tool: 'dura.run_agent', args: { agent: { kind: 'scripted', steps: [pay] } } };
    const verdict = given({ inlinePlans: false }).when(inline([child]));
    expect(verdict?.code).toBe('inline_plans_disabled');
    const asChild = { ...inline([pay]), parent: { runId: 'parent-1', callId: 'c1' } };
    expect(given({ inlinePlans: false }).when(asChild)?.message).toMatch(/this child run carries one/);
  });

  it('lets inline plans call only the tools DURA_INLINE_PLAN_TOOLS lists, control tools always, child plans too', () => {
    const policy: ToolAuthorization = { inlinePlans: true, inlineTools: new Set(['echo']) };
    expect(
      given(policy).when(
        inline([
          { tool: 'echo', args: {} },
          { tool: 'dura.sleep', args: { seconds: 1 } },
        ]),
      ),
    ).toBe(undefined);
    const nested = { tool: 'dura.run_agent', args: { agent: { kind: 'scripted', steps: [pay] } } };
    const verdict = given(policy).when(inline([{ tool: 'echo', args: {} }, nested]));
    expect(verdict?.code).toBe('tool_not_allowed');
    expect(verdict?.message).toMatch(/inline plans may call only echo \(DURA_INLINE_PLAN_TOOLS\)/);
    expect(verdict?.issues).toEqual([
      'agent.steps.1.args.agent.steps.0.tool: inline plans may not call payments.charge',
    ]);
  });

  it('accepts every inline plan when inline plans are on with every tool (tests, npm run dev)', () => {
    expect(given({ inlinePlans: true }).when(inline([pay]))).toBeUndefined();
  });
});

describe('tool authorization: agents per tenant', () => {
  const policy: ToolAuthorization = {
    inlinePlans: false,
    tenantAgents: parseTenantAgents('acme=support|research@2, guest=-, *=support'),
  };

  it('lets a tenant start the agents on its list, and the `*` list applies to every tenant not named', () => {
    expect(given(policy).when(agent('support', 'acme'))).toBeUndefined();
    expect(given(policy).when(agent('research', 'acme', '2'))).toBeUndefined();
    expect(given(policy).when(agent('support', 'other'))).toBeUndefined();
    expect(given(policy).when(agent('support'))).toBeUndefined();
  });

  it('refuses an agent not on the list, naming tenant, agent, what it may start and the setting', () => {
    const verdict = given(policy).when(agent('billing', 'acme'));
    expect(verdict?.code).toBe('agent_not_allowed');
    expect(verdict?.message).toBe(
      "agent: tenant acme may not start agent billing; it may start support, research@2; add the agent to the tenant's list in PLANNER_TENANT_AGENTS to allow it",
    );
    expect(given(policy).when(agent('support', 'guest'))?.message).toMatch(/it may start no agent/);
  });

  it('holds a version grant to the version the run would be pinned to, also when the request names none', () => {
    expect(given(policy).when(agent('research', 'acme', '3'))?.code).toBe('agent_not_allowed');
    expect(given(policy, () => '2').when(agent('research', 'acme'))).toBeUndefined();
    expect(given(policy, () => '3').when(agent('research', 'acme'))?.code).toBe('agent_not_allowed');
  });

  it('checks the agents an inline plan starts as children against the same tenant', () => {
    const open = { ...policy, inlinePlans: true };
    const child = { tool: 'dura.run_agent', args: { agent: 'billing' } };
    expect(given(open).when(inline([child], 'acme'))?.issues).toEqual([
      'agent.steps.0.args.agent: tenant acme may not start agent billing; it may start support, research@2',
    ]);
  });

  it('lets every tenant start every agent without a policy (embedding, `dura dev`), and none when unnamed without `*`', () => {
    expect(given({ inlinePlans: false }).when(agent('billing', 'acme'))).toBeUndefined();
    const named = { inlinePlans: false, tenantAgents: parseTenantAgents('acme=*') };
    expect(given(named).when(agent('billing', 'acme'))).toBeUndefined();
    expect(given(named).when(agent('billing', 'other'))?.code).toBe('agent_not_allowed');
  });
});

describe('tool authorization: the service without PLANNER_TENANT_AGENTS', () => {
  const unset = { inlinePlans: false, tenantAgents: UNSET_TENANT_AGENTS };
  it('lets tenant default start every agent: a deployment without tenants runs as before', () => {
    expect(given(unset).when(agent('billing'))).toBeUndefined();
    expect(given(unset).when(agent('billing', 'default'))).toBeUndefined();
  });

  it('refuses every agent to every other tenant, naming the setting to give', () => {
    expect(given(unset).when(agent('billing', 'globex'))).toEqual({
      code: 'agent_not_allowed',
      message:
        'agent: tenant globex may not start agent billing; it may start no agent: PLANNER_TENANT_AGENTS is not set, so only tenant default may start agents; set it to the agents each tenant may start (e.g. "globex=<agent>|<agent>")',
      issues: ['agent: tenant globex may not start agent billing; it may start no agent'],
    });
  });
});

describe('tool authorization: configuration', () => {
  it('defaults to closed: no inline plans, every tool once they are on, no tenant list', () => {
    const config = loadPlannerConfig({});
    expect(config.DURA_INLINE_PLANS).toBe(false);
    expect(config.DURA_INLINE_PLAN_TOOLS).toBe('*');
    expect(parseInlineTools(config.DURA_INLINE_PLAN_TOOLS)).toBeUndefined();
    expect(config.PLANNER_TENANT_AGENTS).toBeUndefined();
    expect(loadPlannerConfig({ DURA_INLINE_PLANS: 'true' }).DURA_INLINE_PLANS).toBe(true);
    expect(parseInlineTools(' echo , http.request')).toEqual(new Set(['echo', 'http.request']));
  });

  it('refuses malformed values at start with the variable named (exit code 2 through the config error)', () => {
    expect(() => loadPlannerConfig({ DURA_INLINE_PLANS: 'yes' })).toThrow(
      /DURA_INLINE_PLANS: .*"true".*\(got "yes"\)/s,
    );
    expect(() => loadPlannerConfig({ PLANNER_TENANT_AGENTS: 'acme=Support' })).toThrow(
      /PLANNER_TENANT_AGENTS: "acme=Support" is not an entry like/,
    );
    expect(() => loadPlannerConfig({ PLANNER_TENANT_AGENTS: 'acme=*,acme=-' })).toThrow(
      /PLANNER_TENANT_AGENTS: "acme" is named twice/,
    );
    expect(() => loadPlannerConfig({ DURA_INLINE_PLAN_TOOLS: 'echo;rm' })).toThrow(
      /DURA_INLINE_PLAN_TOOLS: expected tool names/,
    );
    for (const bad of ['', 'acme', 'acme=', '=support', 'ac.me=support', 'acme=support|', 'acme=support@'])
      expect(() => parseTenantAgents(bad), bad).toThrow(/PLANNER_TENANT_AGENTS/);
  });
});
