import type { JetStreamClient } from '@nats-io/jetstream';
import {
  SUBJECTS,
  TASK_VERSION,
  timerTaskMsgId,
  timerWakeMsgId,
  TOOL_TASK_WITH_REF_VERSION,
  toolTaskSubject,
  type TimerTask,
  type ToolTask,
} from '@dura/contracts';
import type { CallState, ChildRunState, WaitState } from '@dura/core';
import { DURA_ATTRS, injectContext, traceparentOf, withProducerSpan } from '@dura/telemetry';
import type { Tracer } from '@opentelemetry/api';
import type { CachedRun } from './run-state-cache';
import type { TimerDue } from './timer-due';

/** The task that has a gateway run one pending call of the run. */
export function toolTask(run: CachedRun, call: CallState): ToolTask {
  const runId = run.state.runId as string;
  return {
    v: call.argsRef ? TOOL_TASK_WITH_REF_VERSION : TASK_VERSION,
    runId,
    callId: call.callId,
    step: call.step,
    tool: call.tool,
    args: call.args,
    ...(call.argsRef ? { argsRef: call.argsRef } : {}),
    idempotencyKey: call.idempotencyKey,
    causationId: call.intentId,
    correlationId: run.state.correlationId ?? runId,
  };
}

/** The span attributes naming a call: its run, tool, call id and idempotency key (a tool task's or a direct call's). */
export function callAttributes(task: ToolTask): Record<string, string> {
  return {
    [DURA_ATTRS.runId]: task.runId,
    [DURA_ATTRS.toolName]: task.tool,
    [DURA_ATTRS.toolCallId]: task.callId,
    [DURA_ATTRS.idempotencyKey]: task.idempotencyKey,
  };
}

/** Publishes a tool task (deduped on its idempotency key) under a producer span. */
export function publishToolTask(js: JetStreamClient, tracer: Tracer, task: ToolTask): Promise<unknown> {
  const subject = toolTaskSubject(task.tool);
  return withProducerSpan(
    tracer,
    {
      destination: subject,
      destinationTemplate: 'dura.task.tool.{tool}',
      messageId: task.idempotencyKey,
      attributes: callAttributes(task),
    },
    (headers, span) => {
      const trace = traceparentOf(span);
      return js.publish(subject, JSON.stringify(trace ? { ...task, trace } : task), {
        msgID: task.idempotencyKey,
        headers,
      });
    },
  );
}

/** Hands out what a run waits on to whoever acts on it: tool tasks, timer tasks, child run requests. */
export interface TaskDispatch {
  /** Publishes a tool task per call (deduped on its idempotency key), each under a producer span. */
  tools(run: CachedRun, calls: readonly CallState[]): Promise<void>;
  /** Hands out the timers of open waits and the requests of running children (both dedupe on their ids). */
  waits(run: CachedRun, timers: readonly WaitState[], children: readonly ChildRunState[]): Promise<void>;
  /** Has the gateway fire the timer of an open wait now, once (`TimerTask.wake`), if it has not fired yet. */
  wakeTimer(run: CachedRun, wait: WaitState): Promise<void>;
}

export function createTaskDispatch(deps: {
  js: JetStreamClient;
  tracer: Tracer;
  timerDue: TimerDue;
}): TaskDispatch {
  async function tools(run: CachedRun, calls: readonly CallState[]): Promise<void> {
    await Promise.all(calls.map((call) => publishToolTask(deps.js, deps.tracer, toolTask(run, call))));
  }

  async function waits(
    run: CachedRun,
    timers: readonly WaitState[],
    children: readonly ChildRunState[],
  ): Promise<void> {
    const runId = run.state.runId as string;
    const correlationId = run.state.correlationId ?? runId;
    const trace = traceparentOf();
    await Promise.all([
      ...timers.map(async (wait) => {
        const task: TimerTask = {
          v: TASK_VERSION,
          runId,
          waitId: wait.waitId,
          dueAt: await deps.timerDue(run.state, wait),
          causationId: run.lastEventId ?? runId,
          correlationId,
          ...(trace ? { trace } : {}),
        };
        return deps.js.publish(SUBJECTS.timerTask, JSON.stringify(task), {
          msgID: timerTaskMsgId(runId, wait.waitId),
          headers: injectContext(),
        });
      }),
      // A child runs in its parent's trace, which its end then carries back to the parent.
      ...children.map((child) =>
        deps.js.publish(SUBJECTS.submit, JSON.stringify(child.request), {
          msgID: child.childRunId,
          headers: injectContext(),
        }),
      ),
    ]);
  }

  async function wakeTimer(run: CachedRun, wait: WaitState): Promise<void> {
    const runId = run.state.runId as string;
    const trace = traceparentOf();
    const task: TimerTask = {
      v: TASK_VERSION,
      runId,
      waitId: wait.waitId,
      dueAt: new Date().toISOString(),
      causationId: run.lastEventId ?? runId,
      correlationId: run.state.correlationId ?? runId,
      wake: true,
      ...(trace ? { trace } : {}),
    };
    await deps.js.publish(SUBJECTS.timerTask, JSON.stringify(task), {
      msgID: timerWakeMsgId(runId, wait.waitId),
      headers: injectContext(),
    });
  }

  return { tools, waits, wakeTimer };
}
