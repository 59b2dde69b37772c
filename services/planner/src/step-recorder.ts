import { failedDraft, type PlannerStep } from '@dura/agents';
import { EventOverLimits, EventTooLarge } from '@dura/event-store';
import { failpoint } from '@dura/service-kit';
import type { RunAppender } from './run-appender';
import type { CachedRun } from './run-state-cache';
import type { Speculation } from './speculation';

/** What a drive hands the recorder of a step: its decision's span, and the trace its events fall back to. */
export interface StepContext {
  /** Runs `fn` inside the span of the drive's current decision. */
  inDecision<T>(fn: () => Promise<T>): Promise<T>;
  /** The decision's thought (or the model's refusal) is in the log. */
  decided(): void;
  /** W3C traceparent the appended events carry when no span is active. */
  trace: string | undefined;
}

/**
 * Appends a planner step, with the crash points the fault tests kill at. A model answer the log cannot
 * hold (over its limits or the server's max_payload) is never recorded, and asking again costs as much:
 * the run fails with the reason, never wedges.
 */
export async function recordStep(
  appender: RunAppender,
  drive: StepContext,
  run: CachedRun,
  step: PlannerStep,
  speculation?: Speculation,
): Promise<CachedRun | undefined> {
  if (step.kind === 'none') return undefined;
  const decided = step.kind === 'record' || step.kind === 'summary' || step.kind === 'model_refused';
  const inSpan =
    decided || step.kind === 'thought'
      ? <T>(fn: () => Promise<T>) => drive.inDecision(fn)
      : <T>(fn: () => Promise<T>) => fn();
  if (step.kind === 'thought') failpoint('planner.after-model');
  // A thought and what it implies (its intents, or the end of the run) are recorded as one append.
  const drafts =
    step.kind === 'thought' ? [...step.drafts, ...appender.impliedBy(run.state, step.drafts)] : step.drafts;
  const turn = drafts.length > step.drafts.length;
  let recorded = drafts;
  const appended = await inSpan(() => appender.append(run, drafts, drive.trace, turn, speculation)).catch(
    (err: unknown) => {
      if (step.kind !== 'thought' || !(err instanceof EventOverLimits || err instanceof EventTooLarge))
        throw err;
      recorded = [failedDraft(err)];
      return inSpan(() => appender.append(run, recorded, drive.trace, false, speculation));
    },
  );
  // The crash points follow what was recorded: a refused turn recorded only the run's failure.
  const types = new Set(recorded.map((draft) => draft.type));
  if (step.kind === 'record' || turn) {
    if (types.has('tool_call_requested')) failpoint('planner.after-intent');
    if (types.has('wait_requested')) failpoint('planner.after-wait');
    if (types.has('run_cancelled')) failpoint('planner.after-cancel');
  }
  if (step.kind === 'reserve') failpoint('planner.after-reserve');
  if (step.kind === 'summary') failpoint('planner.after-summary');
  if (step.kind === 'thought' || step.kind === 'model_refused') drive.decided();
  return appended;
}
