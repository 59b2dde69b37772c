import { tool, type FunctionTool, type SerializedTool } from '@openai/agents';
import { AgentMisuse, frameworkCtx, ToolFailure, type Ctx } from '@dura/code-agents';
import { DuraError, type JsonObject } from '@dura/contracts';
import type { z } from 'zod';

/**
 * A Dura tool as the model is shown it: its name as the agent declares it, and optionally its description,
 * its parameters (a zod object, which makes the tool strict, or JSON Schema) and whether a person approves
 * each call first (`needsApproval`: the run waits on a Dura approval, see `durableRun`).
 */
export interface DuraToolSpec {
  name: string;
  description?: string;
  parameters?: z.ZodObject | Record<string, unknown>;
  needsApproval?: boolean;
}

/** A Dura tool by name or spec. */
export type DuraToolRef = string | DuraToolSpec;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the Agents SDK's own alias for a tool of any shape
type AnyFunctionTool = FunctionTool<any, any, any>;

const ANY_OBJECT = { type: 'object', properties: {}, additionalProperties: true } as const;

/** The function tools `duraTools` made, and the names each context's durable models may offer. */
const made = new WeakSet<AnyFunctionTool>();
const offered = new WeakMap<Ctx, Set<string>>();

/** Whether `candidate` is a function tool `duraTools` made (one whose calls run through `ctx.tool`). */
export function isDuraTool(candidate: unknown): boolean {
  return typeof candidate === 'object' && candidate !== null && made.has(candidate as AnyFunctionTool);
}

/**
 * Dura tools as Agents SDK function tools: each call the model asks for runs as `ctx.tool` (an intent in
 * the log, the effect by the gateway under its idempotency key, the result replayed from the log). The
 * model sees the Dura name with `.` as `_` (`pay.charge` → `pay_charge`). A failed call is shown to the
 * model as an error result.
 *
 * @example
 * const agent = new Agent({ name: 'billing', model: 'gpt-4o-mini', tools: duraTools(ctx, ['pay.charge', { name: 'pay.refund', needsApproval: true }]) });
 */
export function duraTools(ctx: Ctx, refs: readonly DuraToolRef[]): AnyFunctionTool[] {
  const dura = frameworkCtx(ctx, 'duraTools(ctx, tools)');
  const known = offered.get(dura) ?? new Set<string>();
  offered.set(dura, known);
  const names = new Set<string>();
  return refs.map((ref) => {
    const spec = typeof ref === 'string' ? { name: ref } : ref;
    const name = modelName(spec.name);
    if (names.has(name))
      throw new AgentMisuse(`duraTools: two tools are named ${name} for the model; rename one`);
    names.add(name);
    known.add(name);
    const made_ = duraTool(dura, spec, name);
    made.add(made_);
    return made_;
  });
}

/** `pay.charge` → `pay_charge`: what every provider accepts as a tool name. */
function modelName(duraName: string): string {
  return duraName.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function duraTool(ctx: Ctx, spec: DuraToolSpec, name: string): AnyFunctionTool {
  const execute = async (input: unknown): Promise<string> => {
    if (input === null || typeof input !== 'object' || Array.isArray(input))
      throw new DuraError(
        'invalid_tool_input',
        `${spec.name} takes an object, the model gave ${JSON.stringify(input)}`,
      );
    try {
      return JSON.stringify(await ctx.tool(spec.name, input as JsonObject));
    } catch (err) {
      // The model is told, as ctx.loop tells it; anything else (a misuse, a stop) fails the run.
      if (err instanceof ToolFailure)
        return JSON.stringify({ error: { code: err.code, message: err.message } });
      throw err;
    }
  };
  const common = {
    name,
    description: spec.description ?? `The Dura tool ${spec.name}.`,
    needsApproval: spec.needsApproval ?? false,
    errorFunction: null,
    execute,
  };
  const parameters = spec.parameters ?? ANY_OBJECT;
  return isZod(parameters)
    ? (tool({ ...common, parameters, strict: true } as never) as AnyFunctionTool)
    : (tool({ ...common, parameters, strict: false } as never) as AnyFunctionTool);
}

function isZod(value: unknown): value is z.ZodObject {
  return typeof (value as { safeParse?: unknown }).safeParse === 'function';
}

/**
 * Refuses a call that offers the model a function tool `duraTools` did not make for this context: the
 * Runner would run its `execute` in this process, unrecorded.
 */
export function offeredToolsCheck(ctx: Ctx, tools: readonly SerializedTool[]): void {
  const known = offered.get(ctx);
  const foreign = tools.filter((t) => t.type === 'function' && !known?.has(t.name)).map((t) => t.name);
  if (foreign.length > 0)
    throw new AgentMisuse(
      `a durable model was offered function tools that are not Dura tools (${foreign.join(', ')}): their ` +
        'execute would run in this process, unrecorded, and again on every replay. Make them with ' +
        'duraTools(ctx, [...]) so the gateway runs them under their idempotency keys.',
    );
}
