/**
 * Who may start what, and which tools an inline plan may call (pure: no I/O). A request is checked at every
 * door that starts a run (submit, child run, fork) before anything is recorded; calls a registered agent's
 * model asks for are held to the agent's own tool list by the fold (`deniedBy` in @dura/core).
 */
import {
  CONTROL_TOOLS,
  ControlToolSchemas,
  DEFAULT_TENANT,
  isControlTool,
  type AgentSpec,
  type RunRequest,
} from '@dura/contracts';

/** One agent a tenant may start: every version, or the one named. */
export interface AgentGrant {
  name: string;
  version?: string;
}

/** `all`: every agent the planner serves; otherwise only those listed (an empty list: none). */
export type AgentGrants = 'all' | readonly AgentGrant[];

export interface ToolAuthorization {
  /** Whether requests may carry their own scripted plan (`agent.kind: "scripted"`), children included. */
  inlinePlans: boolean;
  /** The tools inline plans may call; undefined: every registered tool. Control tools are always allowed. */
  inlineTools?: ReadonlySet<string>;
  /** The agents each tenant may start; undefined: every tenant may start every agent (embedding, `dura dev`). */
  tenantAgents?: {
    byTenant: ReadonlyMap<string, AgentGrants>;
    fallback?: AgentGrants;
    /** True when no list was configured and this is the service's default (`UNSET_TENANT_AGENTS`). */
    unset?: boolean;
  };
}

/**
 * The planner service without `PLANNER_TENANT_AGENTS`: tenant `default` (a deployment without tenants) may
 * start every agent, any other tenant none. Tenants are in use once a request names one, and then who may
 * start which agent must be said, never assumed.
 */
export const UNSET_TENANT_AGENTS: NonNullable<ToolAuthorization['tenantAgents']> = {
  byTenant: new Map([[DEFAULT_TENANT, 'all']]),
  fallback: [],
  unset: true,
};

/** Everything allowed: embedding and tests. The planner service's configuration defaults are closed. */
export const OPEN_AUTHORIZATION: ToolAuthorization = { inlinePlans: true };

export const AUTHORIZATION_CODES = {
  inlinePlansDisabled: 'inline_plans_disabled',
  agentNotAllowed: 'agent_not_allowed',
  toolNotAllowed: 'tool_not_allowed',
} as const;

export interface AuthorizationProblem {
  code: (typeof AUTHORIZATION_CODES)[keyof typeof AUTHORIZATION_CODES];
  message: string;
  issues?: string[];
}

const AGENT = '[a-z][a-z0-9_.-]*(?:@[A-Za-z0-9_.+-]+)?';
/** One entry of `PLANNER_TENANT_AGENTS`: tenant (or `*`) = `*`, `-` (none) or agents `name[@version]` joined by `|`. */
const TENANT_AGENTS_ENTRY = new RegExp(`^(?:[A-Za-z0-9_-]+|\\*)=(?:\\*|-|${AGENT}(?:\\|${AGENT})*)$`);

/** What is wrong with a `PLANNER_TENANT_AGENTS` value (config loading reports it), or undefined. */
export function tenantAgentsProblem(text: string): string | undefined {
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const entry = raw.replace(/\s+/g, '');
    if (!TENANT_AGENTS_ENTRY.test(entry))
      return `"${raw.trim()}" is not an entry like "acme=support|research@2", "*=*" or "guest=-" (tenant or * = *, - or agent[@version] joined by |)`;
    const tenant = entry.slice(0, entry.indexOf('='));
    if (seen.has(tenant)) return `"${tenant}" is named twice; give each tenant (and *) one list`;
    seen.add(tenant);
  }
  return undefined;
}

/** Parses `PLANNER_TENANT_AGENTS` (e.g. `acme=support|research@2,*=*`); throws naming the bad entry. */
export function parseTenantAgents(text: string): NonNullable<ToolAuthorization['tenantAgents']> {
  const problem = tenantAgentsProblem(text);
  if (problem) throw new Error(`PLANNER_TENANT_AGENTS: ${problem}`);
  const byTenant = new Map<string, AgentGrants>();
  let fallback: AgentGrants | undefined;
  for (const entry of text.replace(/\s+/g, '').split(',')) {
    const [tenant, value] = entry.split('=') as [string, string];
    const grants: AgentGrants =
      value === '*'
        ? 'all'
        : value === '-'
          ? []
          : value.split('|').map((agent) => {
              const [name, version] = agent.split('@') as [string, string | undefined];
              return version === undefined ? { name } : { name, version };
            });
    if (tenant === '*') fallback = grants;
    else byTenant.set(tenant, grants);
  }
  return { byTenant, ...(fallback === undefined ? {} : { fallback }) };
}

/** A comma-separated list of tool names (`echo,http.request`), or `*` for every registered tool. */
export const INLINE_TOOLS_PATTERN = /^\s*(?:\*|[A-Za-z0-9_.-]+(?:\s*,\s*[A-Za-z0-9_.-]+)*)\s*$/;

/** Parses `DURA_INLINE_PLAN_TOOLS`: undefined for `*` (every registered tool). */
export function parseInlineTools(text: string): ReadonlySet<string> | undefined {
  if (!INLINE_TOOLS_PATTERN.test(text))
    throw new Error(`DURA_INLINE_PLAN_TOOLS "${text}" is not a list like "echo,http.request" or "*"`);
  if (text.trim() === '*') return undefined;
  return new Set(text.split(',').map((tool) => tool.trim()));
}

function describeGrants(grants: AgentGrants): string {
  if (grants === 'all') return 'every agent';
  if (grants.length === 0) return 'no agent';
  return grants.map((g) => (g.version ? `${g.name}@${g.version}` : g.name)).join(', ');
}

function grantsOf(policy: ToolAuthorization, tenant: string): AgentGrants {
  const tenants = policy.tenantAgents;
  if (!tenants) return 'all';
  return tenants.byTenant.get(tenant) ?? tenants.fallback ?? [];
}

/** Whether `grants` let a tenant start agent `name` at `version`. */
export function agentAllowed(grants: AgentGrants, name: string, version: string | undefined): boolean {
  if (grants === 'all') return true;
  return grants.some((g) => g.name === name && (g.version === undefined || g.version === version));
}

/** The version a request for an agent runs (the newest served when it names none); undefined: not served. */
export type VersionOf = (agent: { name: string; version?: string }) => string | undefined;

/** Where a plan's inline child plans and child agents sit, found without resolving `$` references. */
function childSpecs(steps: readonly { tool: string; args: Record<string, unknown> }[], path: string) {
  const found: { path: string; agent: AgentSpec }[] = [];
  steps.forEach((step, index) => {
    if (step.tool !== CONTROL_TOOLS.runAgent) return;
    const parsed = ControlToolSchemas[CONTROL_TOOLS.runAgent].safeParse(step.args);
    if (!parsed.success) return;
    const at = `${path}.steps.${index}.args.agent`;
    const { agent, version } = parsed.data;
    const spec: AgentSpec =
      typeof agent === 'string' ? { kind: 'agent', name: agent, ...(version ? { version } : {}) } : agent;
    found.push({ path: at, agent: spec });
    if (spec.kind === 'scripted') found.push(...childSpecs(spec.steps, at));
  });
  return found;
}

/**
 * Whether `request` may start a run under `policy`: its own plan or agent, and the plans and agents of the
 * children its plan names outright (children whose spec comes from a `$` reference are checked when they
 * arrive at the intake, like every child). Undefined: allowed.
 */
export function authorizeRequest(
  policy: ToolAuthorization,
  request: RunRequest,
  versionOf: VersionOf = (agent) => agent.version,
): AuthorizationProblem | undefined {
  const tenant = request.tenant ?? DEFAULT_TENANT;
  const specs: { path: string; agent: AgentSpec }[] = [{ path: 'agent', agent: request.agent }];
  if (request.agent.kind === 'scripted') specs.push(...childSpecs(request.agent.steps, 'agent'));
  const grants = grantsOf(policy, tenant);
  const denied: string[] = [];
  const tools: string[] = [];
  for (const { path, agent } of specs) {
    if (agent.kind === 'agent') {
      if (!agentAllowed(grants, agent.name, versionOf(agent) ?? agent.version))
        denied.push(
          `${path}: tenant ${tenant} may not start agent ${agent.name}${agent.version ? `@${agent.version}` : ''}; it may start ${describeGrants(grants)}`,
        );
      continue;
    }
    if (!policy.inlinePlans) {
      const what = path === 'agent' ? (request.parent ? 'this child run' : 'this request') : path;
      return {
        code: AUTHORIZATION_CODES.inlinePlansDisabled,
        message: `inline scripted plans are off on this deployment (${what} carries one); run a registered agent or set DURA_INLINE_PLANS=true`,
      };
    }
    agent.steps.forEach((step, index) => {
      if (!isControlTool(step.tool) && policy.inlineTools && !policy.inlineTools.has(step.tool))
        tools.push(`${path}.steps.${index}.tool: inline plans may not call ${step.tool}`);
    });
  }
  if (denied.length > 0)
    return {
      code: AUTHORIZATION_CODES.agentNotAllowed,
      message: policy.tenantAgents?.unset
        ? `${denied[0] as string}: PLANNER_TENANT_AGENTS is not set, so only tenant ${DEFAULT_TENANT} may start agents; set it to the agents each tenant may start (e.g. "${tenant}=<agent>|<agent>")`
        : `${denied[0] as string}; add the agent to the tenant's list in PLANNER_TENANT_AGENTS to allow it`,
      issues: denied,
    };
  if (tools.length > 0) {
    const allowed = [...(policy.inlineTools ?? [])].sort().join(', ') || 'none';
    return {
      code: AUTHORIZATION_CODES.toolNotAllowed,
      message: `inline plans may call only ${allowed} (DURA_INLINE_PLAN_TOOLS); run a registered agent that has the tool, or add it to DURA_INLINE_PLAN_TOOLS`,
      issues: tools,
    };
  }
  return undefined;
}
