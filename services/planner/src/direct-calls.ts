import type { JetStreamClient } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/nats-core';
import {
  DIRECT_CALL_HEADERS,
  directCallReplyOf,
  directCallSubject,
  SUBJECTS,
  type DirectCallReply,
  type ToolTask,
} from '@dura/contracts';
import { decodeStored } from '@dura/event-store';
import { duraMeter, duraTracer, type Logger } from '@dura/service-kit';
import { declareCounter, withProducerSpan, type MetricSpec } from '@dura/telemetry';
import type { ToolRegistry } from '@dura/tools';
import type { LocalTools } from './in-place-calls';
import { callAttributes, publishToolTask } from './task-dispatch';

/** How long a direct call may go without a word from its gateway before it goes out as a tool task. */
export const DIRECT_CALL_SILENCE_MS = 10_000;
/** Calls of a tool that may run longer than this go out as tool tasks: a drive does not hold its run that long. */
export const DIRECT_CALL_MAX_TIMEOUT_MS = 60_000;

export const DIRECT_CALLS = {
  name: 'dura_direct_calls',
  description:
    'Tool calls a planner handed straight to a gateway, by outcome: done (the drive went on with the observation), or declined, failed or unanswered (sent as a tool task instead)',
  labels: ['outcome'],
} satisfies MetricSpec<'outcome'>;

type Answer = Exclude<DirectCallReply, { kind: 'working' }> | { kind: 'unanswered'; reason: string };

/**
 * The gateways' tools as a planner's drive runs them (`LocalTools`): each call is handed straight to a gateway
 * (request/reply on `dura.call.<tool>`, one gateway of the queue group), which runs it as a worker runs a
 * call in place and answers with where its observation landed; the drive goes on from there, with no tool task
 * and no decide task. The intent is in the log before the request leaves (DESIGN 3), and the gateway claims
 * the key where its tool needs it (DESIGN 5), so losing a request, a reply or a process loses nothing: a call
 * declined, failed or not answered (no gateway, or silent for `silenceMs`) is sent as a tool task, the
 * durable way, and its observation comes with a decide task; a drive that dies leaves its message to come
 * again.
 */
export function createDirectCalls(deps: {
  nc: NatsConnection;
  js: JetStreamClient;
  tools: ToolRegistry;
  log: Logger;
  silenceMs?: number;
}): LocalTools {
  const tracer = duraTracer();
  const counted = declareCounter(duraMeter(), DIRECT_CALLS);
  const silenceMs = deps.silenceMs ?? DIRECT_CALL_SILENCE_MS;

  /** A tool every gateway runs directly: no limit across replicas, and not one that may run for long. */
  function runs(toolName: string): boolean {
    const tool = deps.tools.get(toolName);
    return (
      tool !== undefined &&
      tool.concurrency === undefined &&
      (tool.timeoutMs ?? DIRECT_CALL_MAX_TIMEOUT_MS) <= DIRECT_CALL_MAX_TIMEOUT_MS
    );
  }

  function ask(task: ToolTask, options: { after?: number; fresh?: boolean }): Promise<Answer> {
    const subject = directCallSubject(task.tool);
    return withProducerSpan(
      tracer,
      {
        destination: subject,
        destinationTemplate: `${SUBJECTS.directCallPrefix}.{tool}`,
        messageId: task.idempotencyKey,
        operationName: 'call',
        attributes: callAttributes(task),
      },
      async (headers): Promise<Answer> => {
        if (options.after !== undefined) headers.set(DIRECT_CALL_HEADERS.after, String(options.after));
        if (options.fresh) headers.set(DIRECT_CALL_HEADERS.fresh, 'true');
        let replies: AsyncIterable<Msg>;
        try {
          replies = await deps.nc.requestMany(subject, JSON.stringify(task), {
            strategy: 'stall',
            maxWait: silenceMs,
            stall: silenceMs,
            headers,
          });
          for await (const msg of replies) {
            const read = directCallReplyOf((name) => msg.headers?.get(name) || undefined, msg.data);
            if (!read.ok) return { kind: 'failed', reason: read.problem };
            const reply = read.reply;
            if (reply.kind !== 'working') return reply;
          }
        } catch (err) {
          return { kind: 'unanswered', reason: (err as Error).message };
        }
        return { kind: 'unanswered', reason: `no word from the gateway for ${silenceMs} ms` };
      },
    );
  }

  async function run(
    task: ToolTask,
    options: { after?: number; fresh?: boolean } = {},
  ): ReturnType<LocalTools['run']> {
    const answer = await ask(task, options);
    counted.add(1, { outcome: answer.kind });
    if (answer.kind === 'done') {
      const { seq, retryAfterMs, observation } = answer;
      return {
        ...(seq === undefined ? {} : { seq }),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(seq !== undefined && observation ? { event: decodeStored({ seq, data: observation }) } : {}),
      };
    }
    const what = { runId: task.runId, tool: task.tool, callId: task.callId, reason: answer.reason };
    if (answer.kind === 'declined') deps.log.debug('direct call declined; sending a tool task', what);
    else deps.log.warn(`direct call ${answer.kind}; sending a tool task`, what);
    await publishToolTask(deps.js, tracer, task);
    return { handedOff: true };
  }

  return { runs, run };
}
