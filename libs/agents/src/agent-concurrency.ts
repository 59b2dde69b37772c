import {
  DuraError,
  resolveKeyTemplate,
  type ConcurrencyKey,
  type ConcurrencyKeyTemplate,
  type RunRequest,
} from '@dura/contracts';

/** The code of a run request refused because its agent's concurrency key cannot be filled from its input. */
export const KEY_UNRESOLVED_CODE = 'concurrency_key_unresolved';

/**
 * The concurrency key `run_started` records for a run of an agent declaring `template`: none when the request
 * names its own (the request's key wins) or the agent declares none; else the template filled from the run's
 * input, once. A path the input does not fill is a refusal naming the path, never a key shared by every run
 * that lacks it.
 */
export function definitionKey(
  template: ConcurrencyKeyTemplate | undefined,
  request: RunRequest,
  agent: string,
): { concurrency?: ConcurrencyKey } {
  if (!template || request.concurrency) return {};
  const resolved = resolveKeyTemplate(template, request.input);
  if (resolved.ok) return { concurrency: resolved.key };
  throw new DuraError(
    KEY_UNRESOLVED_CODE,
    `agent ${agent} keys its runs by concurrency key "${template.key}", but ${resolved.path} in this run's input ${resolved.problem}; ` +
      'send the input with it, or name a key in the request (concurrency: { key, limit })',
  );
}
