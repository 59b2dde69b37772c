import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { jsonSchema, tool, type FlexibleSchema, type Tool, type ToolSet } from 'ai';
import { DuraError, type ApprovalPolicy, type JsonObject } from '@dura/contracts';
import { AgentMisuse, ToolFailure, frameworkCtx, type Ctx } from '@dura/code-agents';

/**
 * A Dura tool as the model is shown it: its name as the agent declares it, and optionally its description
 * and input schema (a zod schema, or JSON Schema). A `defineTool` definition is one.
 */
export interface DuraToolSpec {
  name: string;
  description?: string;
  input?: FlexibleSchema;
  /** The input as JSON Schema, when the tool brought its own (an MCP server's). */
  inputJsonSchema?: Record<string, unknown>;
  /**
   * A person approves each call before the gateway runs it (the run waits, holding nothing; `dura approve`,
   * the console or a chat page answers). `true` is `{ onTimeout: 'reject' }` with no timeout. A refusal is
   * not run and the model is told, as the call's result `{ refused: reason }`.
   */
  needsApproval?: boolean | ApprovalPolicy;
}

/** A Dura tool by name or spec; in a record, an AI SDK tool without `execute` too (the code answers its calls). */
export type DuraToolRef = string | DuraToolSpec;

const ANY_OBJECT = { type: 'object', additionalProperties: true } as const;

/** The AI SDK tool names each context's durable models may offer: those `duraTools` made or let through. */
const offered = new WeakMap<Ctx, Set<string>>();

/**
 * Dura tools as AI SDK tools: each call the model asks for runs as `ctx.tool` (an intent in the log, the
 * effect by the gateway under its idempotency key, the result replayed from the log). Given a list, the AI
 * SDK names are the Dura names with `.` as `_` (`pay.charge` → `pay_charge`); given a record, its keys.
 * An AI SDK tool with an `execute` of its own is refused: it would run in this process, unrecorded.
 *
 * @example
 * const tools = duraTools(ctx, ['web.search', payCharge]);
 * const { text } = await generateText({ model: durable(ctx, model), tools, stopWhen: stepCountIs(6), prompt });
 */
export function duraTools(
  ctx: Ctx,
  tools: readonly DuraToolRef[] | Readonly<Record<string, DuraToolRef | Tool>>,
): ToolSet {
  const dura = frameworkCtx(ctx, 'duraTools(ctx, tools)');
  const entries: [string, DuraToolRef | Tool][] = Array.isArray(tools)
    ? tools.map((ref: DuraToolRef) => [aiName(typeof ref === 'string' ? ref : ref.name), ref])
    : Object.entries(tools);
  const set: ToolSet = {};
  for (const [name, ref] of entries) {
    if (Object.hasOwn(set, name))
      throw new AgentMisuse(`duraTools: two tools are named ${name} for the model; rename one`);
    set[name] = typeof ref === 'string' || isSpec(ref) ? duraTool(dura, ref) : ownTool(name, ref);
  }
  const known = offered.get(dura) ?? new Set<string>();
  for (const name of Object.keys(set)) known.add(name);
  offered.set(dura, known);
  return set;
}

/** `pay.charge` → `pay_charge`: what every provider accepts as a tool name. */
function aiName(duraName: string): string {
  return duraName.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function isSpec(ref: DuraToolSpec | Tool): ref is DuraToolSpec {
  return typeof (ref as { name?: unknown }).name === 'string';
}

function duraTool(ctx: Ctx, ref: DuraToolRef): Tool {
  const spec: DuraToolSpec = typeof ref === 'string' ? { name: ref } : ref;
  const inputSchema: FlexibleSchema =
    spec.input ?? jsonSchema(spec.inputJsonSchema ?? (ANY_OBJECT as unknown as Record<string, unknown>));
  const approval = approvalOf(spec);
  return tool({
    description: spec.description ?? `The Dura tool ${spec.name}.`,
    inputSchema,
    execute: async (input: unknown) => {
      if (input === null || typeof input !== 'object' || Array.isArray(input))
        throw new DuraError(
          'invalid_tool_input',
          `${spec.name} takes an object, the model gave ${JSON.stringify(input)}`,
        );
      if (!approval) return ctx.tool(spec.name, input as JsonObject);
      try {
        return await ctx.tool(spec.name, input as JsonObject, { approval });
      } catch (err) {
        // The refusal is recorded in the log (tool_call_failed, code `rejected`): the model is told, nothing ran.
        if (err instanceof ToolFailure && err.code === 'rejected') return { refused: err.error.message };
        throw err;
      }
    },
  });
}

/** The approval policy a spec asks for; a spec that asks for none, or `false`, runs its calls unasked. */
function approvalOf(spec: DuraToolSpec): ApprovalPolicy | undefined {
  const wanted = spec.needsApproval;
  if (wanted === undefined || wanted === false) return undefined;
  if (wanted === true) return { onTimeout: 'reject' };
  if (
    typeof wanted !== 'object' ||
    wanted === null ||
    !['reject', 'approve', 'fail'].includes(wanted.onTimeout)
  )
    throw new AgentMisuse(
      `duraTools: ${spec.name}'s needsApproval is ${JSON.stringify(wanted)}; give true, false or ` +
        "an approval policy such as { onTimeout: 'reject', timeoutSeconds: 86400 }",
    );
  return wanted;
}

function ownTool(name: string, given: Tool): Tool {
  if (typeof given.execute === 'function')
    throw new AgentMisuse(
      `duraTools: the tool ${name} has an execute of its own, which would run in this process, unrecorded, ` +
        'and again on every replay. Define it as a Dura tool (defineTool, run by the gateway under its ' +
        "idempotency key), declare it in the agent's tools and pass its name; or drop execute and act on " +
        'its calls through ctx.',
    );
  return given;
}

/**
 * Refuses a call that offers the model a function tool `duraTools` did not make or let through for this
 * context: the AI SDK would run its `execute` in this process, unrecorded.
 */
export function offeredToolsCheck(ctx: Ctx, tools: LanguageModelV4CallOptions['tools']): void {
  const known = offered.get(ctx);
  const foreign = (tools ?? [])
    .filter((t) => t.type === 'function' && !known?.has(t.name))
    .map((t) => t.name);
  if (foreign.length > 0)
    throw new AgentMisuse(
      `a durable model was offered tools that are not Dura tools (${foreign.join(', ')}): their execute would ` +
        'run in this process, unrecorded. Make them with duraTools(ctx, [...]) so the gateway runs them.',
    );
}
