import type { JsMsg } from '@nats-io/jetstream';
import {
  ContractViolation,
  decodeOrThrow,
  TASK_DECODE,
  toolTaskSubject,
  ToolTaskSchema,
  type ToolTask,
} from '@dura/contracts';

/** Decodes a tool task, refusing one published on another tool's subject. */
export function parseTask(msg: JsMsg): ToolTask {
  const parsed = { data: decodeOrThrow(msg.data, ToolTaskSchema, 'tool task', TASK_DECODE) };
  // Permissions are granted per subject: a task must not reach a tool other than the one its subject names.
  const expected = toolTaskSubject(parsed.data.tool);
  if (msg.subject !== expected)
    throw new ContractViolation(
      `tool task for ${parsed.data.tool} was published on ${msg.subject}; publish it on ${expected}`,
      [`tool: "${parsed.data.tool}" does not match the subject ${msg.subject}`],
    );
  return parsed.data;
}
