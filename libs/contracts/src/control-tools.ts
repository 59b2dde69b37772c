import * as z from 'zod';
import { JsonValueSchema } from './ids';
import { AgentRefSchema, AgentSpecSchema } from './run-request';

/**
 * Tools the planner handles itself instead of the gateway: they make the run wait durably (a timer, a
 * named signal, a child run) and resolve as ordinary tool results, so a model and a scripted plan use them
 * like any other tool, in parallel with others too.
 */
export const CONTROL_TOOLS = {
  sleep: 'dura.sleep',
  waitForSignal: 'dura.wait_for_signal',
  runAgent: 'dura.run_agent',
} as const;
export type ControlToolName = (typeof CONTROL_TOOLS)[keyof typeof CONTROL_TOOLS];

/** A year: the longest any durable wait may be asked for in one call. */
export const MAX_WAIT_SECONDS = 366 * 24 * 3600;

export const ControlToolSchemas = {
  [CONTROL_TOOLS.sleep]: z
    .object({
      seconds: z
        .number()
        .positive()
        .max(MAX_WAIT_SECONDS)
        .optional()
        .describe('How long to sleep, in seconds.'),
      until: z.iso.datetime({ offset: true }).optional().describe('When to wake up, as an ISO 8601 time.'),
    })
    .refine((args) => (args.seconds === undefined) !== (args.until === undefined), {
      message: 'give exactly one of "seconds" or "until"',
    }),
  [CONTROL_TOOLS.waitForSignal]: z.object({
    name: z.string().min(1).max(200).describe('The signal to wait for, e.g. "reply".'),
    timeoutSeconds: z
      .number()
      .positive()
      .max(MAX_WAIT_SECONDS)
      .optional()
      .describe('Give up waiting after this many seconds.'),
    approval: z
      .literal(true)
      .optional()
      .describe('The signal is a person\'s verdict: only the payload {"approved": true} approves.'),
  }),
  [CONTROL_TOOLS.runAgent]: z.object({
    /** A registered agent's name, or a whole agent spec (a scripted plan in tests and demos). */
    agent: z.union([AgentRefSchema.shape.name, AgentSpecSchema]).describe('The registered agent to run.'),
    version: AgentRefSchema.shape.version.describe('The agent version; the newest when left out.'),
    input: JsonValueSchema.optional().describe("The child run's input, any JSON value."),
  }),
} as const;

export const CONTROL_TOOL_DESCRIPTIONS: Record<ControlToolName, string> = {
  [CONTROL_TOOLS.sleep]:
    'Pause this run for a while (give "seconds") or until a time (give "until"). The run resumes by itself afterwards.',
  [CONTROL_TOOLS.waitForSignal]:
    "Pause this run until a named signal arrives (for example a human approval). The signal's payload is the result.",
  [CONTROL_TOOLS.runAgent]:
    'Start another agent as a child run and wait for it to finish. Its output is the result.',
};

export function isControlTool(tool: string): tool is ControlToolName {
  return Object.hasOwn(ControlToolSchemas, tool);
}
