import * as z from 'zod';
import { JsonObjectSchema, JsonValueSchema, ToolNameSchema } from './ids';
import { ContractViolation } from './errors';
import { formatIssues } from './format-issues';
import { RUN_REQUEST_VERSION } from './run-request';
import { CURRENT_EVENT_VERSIONS, type EventType } from './event-data';

type Upcaster = (data: unknown) => unknown;

/** run_requested v1 (release 0.1): the plan sat at the top level of the event. */
const RunRequestedV1 = z.object({
  runId: z.string(),
  plan: z.array(z.object({ tool: ToolNameSchema, args: JsonObjectSchema })),
  input: JsonValueSchema.optional(),
});

/** thought v1 (release 0.1): a model name, free text, tool calls or an output, and total tokens only. */
const ThoughtV1 = z.object({
  step: z.number().int().nonnegative(),
  model: z.string(),
  text: z.string().optional(),
  calls: z.array(z.object({ callId: z.string(), tool: ToolNameSchema, args: JsonObjectSchema })).optional(),
  output: JsonValueSchema.optional(),
  usage: z.object({ totalTokens: z.number().int().nonnegative() }),
});

/**
 * A request as run_requested v2 and child_run_requested v1 recorded it: `tags` was a string map. Those pairs
 * are metadata now (tags became a list of labels).
 */
const LegacyTaggedRequest = z.looseObject({ tags: z.record(z.string(), z.string()).optional() });

function movedLegacyTags(request: unknown, what: string): unknown {
  const old = parseLegacy(LegacyTaggedRequest, request, what);
  if (old.tags === undefined) return old;
  const { tags, ...rest } = old;
  return { ...rest, metadata: tags };
}

function parseLegacy<T>(schema: z.ZodType<T>, data: unknown, what: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new ContractViolation(`invalid ${what}`, formatIssues(parsed.error));
  return parsed.data;
}

/**
 * The agents release only added optional fields (pins, budgets, prompts, payload references, wait kinds): the
 * old data is valid new data. The version still moved, so an older reader refuses these events instead of
 * silently dropping fields it does not know (a payload reference, an approval).
 */
const unchanged: Upcaster = (data) => data;

const SignalReceivedV1 = z.looseObject({ name: z.string(), payload: JsonValueSchema.optional() });

/**
 * signal_received v1: the signal `approve` approved the call awaiting approval whatever its payload, and
 * `ctx.approve` took any payload without `approved: false` as consent. From v2 only `{ approved: true }`
 * approves, so an `approve` recorded before says so in its payload and the run folds as it did.
 */
function approveMadeExplicit(data: unknown): unknown {
  const old = parseLegacy(SignalReceivedV1, data, 'signal_received v1');
  if (old.name !== 'approve') return old;
  const payload = old.payload;
  const fields = payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? payload : {};
  return fields.approved === false ? old : { ...old, payload: { ...fields, approved: true } };
}

/** `UPCASTERS[type][v]` turns data of version v into version v + 1. */
export const UPCASTERS: Partial<Record<EventType, Record<number, Upcaster>>> = {
  run_started: { 1: unchanged, 2: unchanged },
  tool_call_requested: { 1: unchanged },
  // v3 (forks with edits) added `edited`: optional, so old data is valid new data.
  tool_call_completed: { 1: unchanged, 2: unchanged },
  // v3 (waits anchored on the broker's clock) added `delayMs`: optional, so old data is valid new data.
  wait_requested: { 1: unchanged, 2: unchanged },
  budget_exceeded: { 1: unchanged },
  signal_received: { 1: approveMadeExplicit },
  run_requested: {
    1: (data) => {
      const old = parseLegacy(RunRequestedV1, data, 'run_requested v1');
      return {
        request: {
          v: RUN_REQUEST_VERSION,
          runId: old.runId,
          agent: { kind: 'scripted', steps: old.plan },
          ...(old.input === undefined ? {} : { input: old.input }),
        },
      };
    },
    2: (data) => {
      const old = parseLegacy(z.looseObject({ request: z.unknown() }), data, 'run_requested v2');
      return { ...old, request: movedLegacyTags(old.request, 'run_requested v2 request') };
    },
    // v4 (forks with edits) added `forkOf.edited`: optional, so old data is valid new data.
    3: unchanged,
  },
  child_run_requested: {
    1: (data) => {
      const old = parseLegacy(z.looseObject({ request: z.unknown() }), data, 'child_run_requested v1');
      return { ...old, request: movedLegacyTags(old.request, 'child_run_requested v1 request') };
    },
    2: unchanged,
  },
  thought: {
    1: (data) => {
      const old = parseLegacy(ThoughtV1, data, 'thought v1');
      const decision =
        old.calls && old.calls.length > 0
          ? { kind: 'tool_calls', calls: old.calls }
          : { kind: 'complete', ...(old.output === undefined ? {} : { output: old.output }) };
      return {
        step: old.step,
        model: { id: old.model, promptVersion: 'unversioned' },
        ...(old.text === undefined ? {} : { content: old.text }),
        decision,
        usage: { inputTokens: 0, outputTokens: old.usage.totalTokens },
        finishReason: 'unknown',
      };
    },
    2: unchanged,
  },
};

/** Applies upcasters from `fromVersion` up to the current version of `type`. */
export function upcast(type: EventType, fromVersion: number, data: unknown): unknown {
  const chain = UPCASTERS[type] ?? {};
  let v = fromVersion;
  let current = data;
  for (let step = chain[v]; step !== undefined; step = chain[v]) {
    current = step(current);
    v += 1;
  }
  if (v !== CURRENT_EVENT_VERSIONS[type]) {
    throw new ContractViolation(`no upcaster turns ${type} v${v} into v${CURRENT_EVENT_VERSIONS[type]}`);
  }
  return current;
}
