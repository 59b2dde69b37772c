import {
  ConcurrencyKeyTemplateSchema,
  DuraError,
  formatIssues,
  keyTemplateSecretIssue,
  secretPathIssue,
  type BudgetLimits,
  type ConcurrencyKeyTemplate,
  type JsonValue,
  type PinnedVersion,
} from '@dura/contracts';
import type { z } from 'zod';
import type { Ctx } from './ctx';
import {
  CodeModelSettingsSchema,
  type CodeModelSettings,
  type CodeModelSettingsInput,
} from './model-request';

/** A code agent: a versioned async program over `ctx`, executed by replay of its run's log. */
export interface CodeAgent<I = JsonValue, O = JsonValue> {
  readonly kind: 'code';
  readonly name: string;
  readonly version: string;
  /** Validates the run's input before `run` sees it. */
  readonly input?: z.ZodType<I>;
  /** Validates what `run` returns before it is recorded as the run's output. */
  readonly output?: z.ZodType<O>;
  /** The tools `ctx.tool` may call (the control calls are always allowed). */
  readonly tools: readonly string[];
  readonly budget?: BudgetLimits;
  /** When a budget would be exceeded: fail the run (default), or wait for an operator's `raise_budget`. */
  readonly onBudgetExceeded?: 'fail' | 'wait';
  /** Where `ctx.model` is answered; a call without it fails with `agent_misuse`. */
  readonly model?: CodeModelSettings;
  /** Input fields that hold secrets: sealed before the run's input is recorded, and given to `run` sealed. */
  readonly secrets?: AgentSecrets;
  /** At most `limit` runs of one key at once; `key` is filled from the run's input (see `AgentDefinition`). */
  readonly concurrency?: ConcurrencyKeyTemplate;
  readonly run: (ctx: Ctx, input: I) => Promise<O>;
}

export interface AgentDefinition<I, O> {
  name: string;
  version: string;
  input?: z.ZodType<I>;
  output?: z.ZodType<O>;
  tools: readonly string[];
  budget?: BudgetLimits;
  /** When a budget would be exceeded: fail the run (default), or wait for an operator's `raise_budget`. */
  onBudgetExceeded?: 'fail' | 'wait';
  /** The provider and model `ctx.model` calls, as a JSON agent declares them. */
  model?: CodeModelSettingsInput;
  /**
   * Input fields that hold secrets, as dot paths (`"card.token"`, `"cards.*.token"`). The planner seals them
   * before the run's input is recorded, so no log, table or dead letter holds them in clear; `run` gets them
   * sealed (type them `sealedSecret` in `input`) and can only pass them to a tool field the tool declares
   * secret, where the gateway opens them. A request holding such a value is refused when no key is set.
   */
  secrets?: AgentSecrets;
  /**
   * At most `limit` runs of one key take steps at once; a run over it waits, holding nothing. `key` is a
   * template filled from the run's input when the run is requested: `"customer:{{input.customerId}}"` (a
   * path of field names and list indices; `{{input}}` is the whole input). A request whose input lacks the
   * path is refused, naming it. A request's own `concurrency` wins over this one.
   */
  concurrency?: ConcurrencyKeyTemplate;
  run: (ctx: Ctx, input: I) => Promise<O>;
}

/** What a code agent declares secret, as a tool does (`defineTool({ secrets })`). */
export interface AgentSecrets {
  input?: readonly string[];
}

/** Declares a code agent; pure, so a module can export as many as it likes. */
export function defineAgent<I = JsonValue, O = JsonValue>(
  definition: AgentDefinition<I, O>,
): CodeAgent<I, O> {
  const { model, ...rest } = definition;
  const settings = model === undefined ? undefined : CodeModelSettingsSchema.safeParse(model);
  if (settings && !settings.success)
    throw new DuraError(
      'invalid_agent',
      `the model settings of code agent ${definition.name}@${definition.version} are invalid: ` +
        formatIssues(settings.error).join('; '),
    );
  const pathIssues = (definition.secrets?.input ?? []).flatMap((path) => secretPathIssue(path) ?? []);
  if (pathIssues.length > 0)
    throw new DuraError(
      'invalid_agent',
      `the secrets of code agent ${definition.name}@${definition.version} are invalid: ${pathIssues.join('; ')}`,
    );
  const key = definition.concurrency && ConcurrencyKeyTemplateSchema.safeParse(definition.concurrency);
  const keyIssues = !key
    ? []
    : !key.success
      ? formatIssues(key.error)
      : [keyTemplateSecretIssue(key.data.key, definition.secrets?.input ?? [])].filter(
          (i) => i !== undefined,
        );
  if (keyIssues.length > 0)
    throw new DuraError(
      'invalid_agent',
      `the concurrency key of code agent ${definition.name}@${definition.version} is invalid: ${keyIssues.join('; ')}`,
    );
  return Object.freeze({
    kind: 'code' as const,
    ...rest,
    ...(settings ? { model: settings.data } : {}),
    tools: [...definition.tools],
    ...(definition.secrets ? { secrets: { input: [...(definition.secrets.input ?? [])] } } : {}),
    ...(key?.success ? { concurrency: { ...key.data } } : {}),
  });
}

/**
 * Any code agent, whatever its input and output types: what the engine and a registry hold. `any` because a
 * schema's type parameter is invariant; the engine validates with the agent's own schemas at run time.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCodeAgent = CodeAgent<any, any>;

/** What a run of `agent` is pinned to in `run_started`: the planner serves it only to runs of this version. */
export function pinnedVersion(agent: AnyCodeAgent): PinnedVersion {
  return {
    agent: agent.name,
    version: agent.version,
    promptVersion: agent.version,
    provider: 'code',
    model: 'code',
    tools: [...agent.tools],
  };
}
