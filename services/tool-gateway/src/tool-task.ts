import type { JsMsg } from '@nats-io/jetstream';
import {
  ContractViolation,
  decodeOrThrow,
  directCallSubject,
  TASK_DECODE,
  toolTaskSubject,
  ToolTaskSchema,
  type ToolTask,
} from '@dura/contracts';

/** How a task came: as a tool task from the stream, or as a planner's direct call (see `direct-calls.ts`). */
const WAYS = {
  task: { what: 'tool task', subjectOf: toolTaskSubject, sent: 'published', send: 'publish' },
  direct: { what: 'direct call', subjectOf: directCallSubject, sent: 'sent', send: 'send' },
} as const;

/** Decodes a tool task (or a direct call's), refusing one sent on another tool's subject. */
export function parseTask(msg: Pick<JsMsg, 'data' | 'subject'>, way: keyof typeof WAYS = 'task'): ToolTask {
  const { what, subjectOf, sent, send } = WAYS[way];
  const task = decodeOrThrow(msg.data, ToolTaskSchema, what, TASK_DECODE);
  // Permissions are granted per subject: a task must not reach a tool other than the one its subject names.
  const expected = subjectOf(task.tool);
  if (msg.subject !== expected)
    throw new ContractViolation(
      `${what} for ${task.tool} was ${sent} on ${msg.subject}; ${send} it on ${expected}`,
      [`tool: "${task.tool}" does not match the subject ${msg.subject}`],
    );
  return task;
}
