import { CONTROL_TOOLS, isControlTool, type JsonValue } from '@dura/contracts';
import type { AgentCatalog } from '@dura/agents';
import type { ToolRegistry } from '@dura/tools';
import { inputReferencesAlong } from './plan-references';

/**
 * The input paths of a run of the registered `agent` (at `version`, else the newest served) that hold
 * secrets; undefined when this planner serves no such agent.
 */
export type RegisteredSecrets = (agent: { name: string; version?: string }) => readonly string[] | undefined;

/** A plan step as far as secrets go: a tool and its arguments (a step of an invalid request may be partial). */
interface PlanStep {
  tool: string;
  args: JsonValue;
}

/** No registered agents: only inline plans have secret inputs. */
export const NO_REGISTERED_SECRETS: RegisteredSecrets = () => undefined;

/**
 * The input paths a plan passes to secret fields: `card: "$input.card"` given to a tool whose `card.token` is
 * secret reads `card.token` of the input (`""`: the whole input). A child run (`dura.run_agent`) counts as a
 * tool whose secret fields are its input's: those its registered agent declares, or its inline plan passes on.
 */
export function planSecretInputs(
  steps: readonly PlanStep[],
  tools: ToolRegistry,
  registered: RegisteredSecrets,
): string[] {
  const found = new Set<string>();
  for (const step of steps) {
    const paths =
      step.tool === CONTROL_TOOLS.runAgent
        ? childSecretInputs(step.args, tools, registered).map((path) =>
            path === '' ? 'input' : `input.${path}`,
          )
        : isControlTool(step.tool)
          ? []
          : tools.secretFields(step.tool).args;
    for (const path of paths)
      for (const reference of inputReferencesAlong(step.args, path.split('.'))) found.add(reference);
  }
  return [...found];
}

/** The secret input paths of the child run a `dura.run_agent` call's arguments start. */
function childSecretInputs(args: JsonValue, tools: ToolRegistry, registered: RegisteredSecrets): string[] {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  const agent = args['agent'];
  if (agent === null || typeof agent !== 'object' || Array.isArray(agent)) return [];
  if (agent['kind'] === 'agent' && typeof agent['name'] === 'string')
    return [...(registeredOrNewest(registered, agent['name'], agent['version']) ?? [])];
  if (agent['kind'] === 'scripted' && Array.isArray(agent['steps']))
    return planSecretInputs((agent['steps'] as unknown[]).filter(isPlanStep), tools, registered);
  return [];
}

/** The secret inputs of `name` at `version`, else (a version not served, or none named) of its newest. */
export function registeredOrNewest(
  registered: RegisteredSecrets,
  name: string,
  version: unknown,
): readonly string[] | undefined {
  return (typeof version === 'string' ? registered({ name, version }) : undefined) ?? registered({ name });
}

export function isPlanStep(step: unknown): step is PlanStep {
  return (
    step !== null &&
    typeof step === 'object' &&
    !Array.isArray(step) &&
    typeof (step as Record<string, unknown>)['tool'] === 'string' &&
    (step as Record<string, unknown>)['args'] !== undefined
  );
}

/**
 * The planner's view of registered agents' secret inputs: what each declares, and what its scripted plan
 * passes to a tool's secret field or a child run's secret input. Computed once per agent version.
 */
export function registeredSecrets(
  model: Partial<Pick<AgentCatalog, 'inputSecrets'>> | undefined,
  tools: ToolRegistry,
): RegisteredSecrets {
  const known = new Map<string, readonly string[]>();
  // An agent whose plan starts itself as a child has no further secret inputs through that child.
  const resolving = new Set<string>();
  const lookup: RegisteredSecrets = (agent) => {
    const secrets = model?.inputSecrets?.(agent);
    if (!secrets) return undefined;
    const key = `${agent.name}@${agent.version ?? ''}`;
    const cached = known.get(key);
    if (cached) return cached;
    if (resolving.has(key)) return [];
    resolving.add(key);
    try {
      const paths = [...new Set([...secrets.declared, ...planSecretInputs(secrets.plan, tools, lookup)])];
      // Inside a cycle the answer misses what the agents still being resolved add: kept only at the top.
      if (resolving.size === 1) known.set(key, paths);
      return paths;
    } finally {
      resolving.delete(key);
    }
  };
  return lookup;
}
