import { newEvent, type NewEvent, type RunEvent } from '@dura/contracts';
import {
  decisionEventId,
  fold,
  InvalidTransition,
  nextAction,
  type EventDraft,
  type RunState,
} from '@dura/core';
import { ConcurrencyConflict, type AppendResult, type EventStore } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { traceparentOf } from '@dura/telemetry';
import { decisionIds } from './decision-ids';
import type { RunLoader } from './run-loading';
import type { CachedRun } from './run-state-cache';
import { settleSpeculation, type Speculation } from './speculation';

/** A model turn's events go out in one round trip (see `append`) while this process drives at most this many runs. */
const PIPELINE_MAX_DRIVES = 4;

/** Turns drafts into the run's next events and appends them, guarded by the run's last sequence. */
export interface RunAppender {
  /**
   * Appends what the run's state implies, guarded by its last sequence. Returns the run with the events
   * folded in: a guarded append that succeeded means nothing else reached the log in between, so the next
   * step needs no read. A duplicate ack (a retry, or a racing replica's identical decision) returns nothing:
   * the caller re-reads. With a `speculation`, `run` holds an observation not acknowledged yet, and the
   * append lands only right behind it at the sequence guessed for it; when the observation landed right
   * behind the run's last event at another sequence, the same drafts go behind it there.
   */
  append(
    run: CachedRun,
    drafts: readonly EventDraft[],
    fallbackTrace: string | undefined,
    turn?: boolean,
    speculation?: Speculation,
  ): Promise<CachedRun | undefined>;
  /**
   * What the decider records right after a thought (`nextAction` once it is folded): the intents of its
   * calls, or the end of the run. Empty when it is anything else, or the thought cannot be folded.
   */
  impliedBy(state: RunState, thought: readonly EventDraft[]): EventDraft[];
}

export function createRunAppender(deps: {
  store: EventStore;
  clock: () => Date;
  log: Logger;
  runs: Pick<RunLoader, 'foldIn'>;
  /** How many runs this process is driving right now. */
  drives: () => number;
}): RunAppender {
  async function append(
    run: CachedRun,
    drafts: readonly EventDraft[],
    fallbackTrace: string | undefined,
    turn = false,
    speculation?: Speculation,
  ): Promise<CachedRun | undefined> {
    const { state } = run;
    const runId = state.runId as string;
    const ts = deps.clock().toISOString();
    const trace = traceparentOf() ?? fallbackTrace;
    const events = eventsOf(run, drafts, { ts, turn, ...(trace ? { trace } : {}) });
    // Sent at once only while this process drives few runs: under load another run's append often lands
    // in between, and the one-by-one path costs less than a refused publish and its retry.
    const pipelined = turn && deps.drives() <= PIPELINE_MAX_DRIVES;
    let result: AppendResult;
    // The observation goes first, in the same socket write as this append when it has not gone out yet.
    speculation?.sent.send();
    try {
      result = await deps.store.append(runId, events, {
        expectedSeq: state.lastSeq,
        pipelined,
        ...(speculation ? { follows: speculation.sent.id } : {}),
      });
    } catch (err) {
      if (!speculation || !(err instanceof ConcurrencyConflict)) throw err;
      const settled = await settleSpeculation(speculation, deps.runs);
      if (settled && 'known' in settled && settled.known.state.lastSeq !== state.lastSeq) {
        deps.log.debug('an observation landed at another sequence than guessed', {
          runId,
          guessed: state.lastSeq,
          landed: settled.known.state.lastSeq,
        });
        return append(settled.known, drafts, fallbackTrace, turn);
      }
      // Something reached the run besides the observation: the decision is made again from the log.
      throw err;
    }
    if (result.duplicate) return undefined;
    const recorded = events.map((event, i) => ({ ...event, seq: result.seqs[i] as number }));
    return deps.runs.foldIn(run, recorded);
  }

  function impliedBy(state: RunState, thought: readonly EventDraft[]): EventDraft[] {
    // Folded only to ask what follows, never appended: nothing that decides reads an event's id, so these
    // carry their place alone, without the tag of what they say that `decisionIds` hashes for the append.
    const ts = deps.clock().toISOString();
    const provisional = eventsOf({ state }, thought, { ts, turn: true, placeOnly: true }).map(
      (event, index) => ({ ...event, seq: state.lastSeq + 1 + index }),
    ) as RunEvent[];
    try {
      const action = nextAction(fold(provisional, state));
      return action.kind === 'record' ? action.events : [];
    } catch (err) {
      if (err instanceof InvalidTransition) return [];
      throw err;
    }
  }

  return { append, impliedBy };
}

/**
 * The events an append of `drafts` records right behind the run's last event: ids from the run's last
 * sequence and each draft's place (a retried append is then a duplicate), caused by the run's last event,
 * or in a turn (a thought and what it implies) the later ones by the thought.
 */
function eventsOf(
  run: { state: RunState; lastEventId?: string | undefined },
  drafts: readonly EventDraft[],
  options: { ts: string; turn: boolean; trace?: string; placeOnly?: boolean },
): NewEvent[] {
  const { state } = run;
  const runId = state.runId as string;
  const events: NewEvent[] = [];
  const ids = options.placeOnly
    ? drafts.map((_, index) => decisionEventId(runId, state.lastSeq, index))
    : decisionIds(runId, state.lastSeq, drafts);
  for (const [index, draft] of drafts.entries()) {
    const causationId = options.turn && index > 0 ? (events[0] as NewEvent).meta.id : run.lastEventId;
    events.push(
      newEvent(draft.type, draft.data as never, {
        // Another drive's decision at the same place has other ids: refused by its sequence, never taken for
        // a duplicate of this one (a wait for capacity in place of a thought, say).
        id: ids[index] as string,
        runId,
        ts: options.ts,
        correlationId: state.correlationId ?? runId,
        ...(causationId ? { causationId } : {}),
        // The span that made this decision: whoever acts on the event continues the run's trace from it.
        ...(options.trace ? { trace: options.trace } : {}),
      }),
    );
  }
  return events;
}
