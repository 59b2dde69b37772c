import type { JetStreamClient } from '@nats-io/jetstream';
import {
  DuraError,
  newEvent,
  TASK_VERSION,
  toolTaskSubject,
  type NewEvent,
  type RunEvent,
  type ToolTask,
} from '@dura/contracts';
import {
  decisionEventId,
  fold,
  initialRunState,
  nextAction,
  type CallState,
  type EventDraft,
  type RunState,
} from '@dura/core';
import { ConcurrencyConflict, type EventStore } from '@dura/event-store';
import { failpoint, type Logger } from '@dura/service-kit';
import type { Model } from './model';
import { RunStateCache, type CachedRun } from './run-state-cache';

export interface RunDriverDeps {
  store: EventStore;
  js: JetStreamClient;
  model: Model;
  log: Logger;
  clock: () => Date;
  /** Re-fold-and-retry budget when another replica keeps appending first. */
  maxConflicts?: number;
  cacheSize?: number;
}

export interface DriveOutcome {
  state: RunState;
  modelCalls: number;
  dispatched: number;
}

/**
 * Moves one run forward as far as it can go without waiting: records what a recorded decision implies,
 * (re-)dispatches pending tool calls, and asks the model only when the log holds no unfinished decision.
 * Safe to call any number of times, from any replica: every append is guarded by the run's last sequence.
 */
export function createRunDriver(deps: RunDriverDeps) {
  const cache = new RunStateCache(deps.cacheSize ?? 1000);
  const maxConflicts = deps.maxConflicts ?? 20;

  async function load(runId: string): Promise<CachedRun> {
    const cached = cache.get(runId) ?? { state: initialRunState(), lastEventId: undefined };
    const tail = await deps.store.read(runId, { fromSeq: cached.state.lastSeq + 1 });
    if (tail.length === 0) return cached;
    const next = { state: fold(tail, cached.state), lastEventId: (tail.at(-1) as RunEvent).meta.id };
    cache.set(runId, next);
    return next;
  }

  async function append(
    run: CachedRun,
    drafts: readonly EventDraft[],
    trace: string | undefined,
  ): Promise<void> {
    const { state } = run;
    const runId = state.runId as string;
    const events: NewEvent[] = drafts.map((draft, index) =>
      newEvent(draft.type, draft.data as never, {
        id: decisionEventId(runId, state.lastSeq, index),
        runId,
        ts: deps.clock().toISOString(),
        correlationId: state.correlationId ?? runId,
        ...(run.lastEventId ? { causationId: run.lastEventId } : {}),
        ...(trace ? { trace } : {}),
      }),
    );
    await deps.store.append(runId, events, { expectedSeq: state.lastSeq });
  }

  async function dispatch(run: CachedRun, calls: readonly CallState[]): Promise<void> {
    const runId = run.state.runId as string;
    await Promise.all(
      calls.map((call) => {
        const task: ToolTask = {
          v: TASK_VERSION,
          runId,
          callId: call.callId,
          step: call.step,
          tool: call.tool,
          args: call.args,
          idempotencyKey: call.idempotencyKey,
          causationId: call.intentId,
          correlationId: run.state.correlationId ?? runId,
        };
        return deps.js.publish(toolTaskSubject(call.tool), JSON.stringify(task), {
          msgID: call.idempotencyKey,
        });
      }),
    );
  }

  async function drive(runId: string, options: { trace?: string } = {}): Promise<DriveOutcome> {
    let conflicts = 0;
    let modelCalls = 0;
    for (;;) {
      const run = await load(runId);
      const action = nextAction(run.state);
      try {
        switch (action.kind) {
          case 'idle':
            return { state: run.state, modelCalls, dispatched: 0 };
          case 'dispatch':
            await dispatch(run, action.calls);
            return { state: run.state, modelCalls, dispatched: action.calls.length };
          case 'start':
            await append(run, [{ type: 'run_started', data: {} }], options.trace);
            break;
          case 'record':
            await append(run, action.events, options.trace);
            if (action.events.some((event) => event.type === 'tool_call_requested'))
              failpoint('planner.after-intent');
            break;
          case 'decide': {
            const request = run.state.request;
            if (!request)
              throw new DuraError('corrupt_run', `run ${runId} is running but has no recorded request`);
            const turn = await deps.model.decide({ state: run.state, request });
            modelCalls += 1;
            failpoint('planner.after-model');
            const thought: EventDraft = {
              type: 'thought',
              data: {
                step: run.state.steps,
                model: turn.model,
                ...(turn.content === undefined ? {} : { content: turn.content }),
                decision: turn.decision,
                usage: turn.usage,
                finishReason: turn.finishReason,
              },
            };
            await append(run, [thought], options.trace);
            break;
          }
        }
      } catch (err) {
        if (!(err instanceof ConcurrencyConflict)) throw err;
        conflicts += 1;
        deps.log.debug('lost an append race; re-folding', { runId, conflicts });
        if (conflicts > maxConflicts) {
          throw new DuraError('too_many_conflicts', `run ${runId}: lost ${conflicts} append races in a row`, {
            retryable: true,
            cause: err,
          });
        }
      }
    }
  }

  return { drive, load };
}

export type RunDriver = ReturnType<typeof createRunDriver>;
