import { distribution } from './stats';
import type { StoredEvent } from './stream-log';

export interface RunTimings {
  intentToObservation: number[];
  stepCycle: number[];
  /** `run_requested` → `run_completed` per completed run. */
  runWall: number[];
  completedSteps: number;
  runsCompleted: number;
  runsFailed: number;
  firstRequested: number;
  lastEnded: number;
}

/** Per-step and per-run durations from the stream's store times of the given runs' events. */
export function runTimings(events: readonly StoredEvent[]): RunTimings {
  const byRun = new Map<string, StoredEvent[]>();
  for (const event of events) {
    const list = byRun.get(event.runId) ?? [];
    list.push(event);
    byRun.set(event.runId, list);
  }
  const out: RunTimings = {
    intentToObservation: [],
    stepCycle: [],
    runWall: [],
    completedSteps: 0,
    runsCompleted: 0,
    runsFailed: 0,
    firstRequested: Infinity,
    lastEnded: 0,
  };
  for (const list of byRun.values()) {
    const requested = new Map<string, number>();
    let lastIntent: number | undefined;
    let start: number | undefined;
    for (const event of list) {
      if (event.type === 'run_requested') {
        start = event.at;
        out.firstRequested = Math.min(out.firstRequested, event.at);
      } else if (event.type === 'tool_call_requested' && event.callId) {
        requested.set(event.callId, event.at);
        if (lastIntent !== undefined) out.stepCycle.push(event.at - lastIntent);
        lastIntent = event.at;
      } else if (event.type === 'tool_call_completed' && event.callId) {
        const at = requested.get(event.callId);
        if (at !== undefined) out.intentToObservation.push(event.at - at);
        out.completedSteps += 1;
      } else if (event.type === 'run_completed' || event.type === 'run_failed') {
        if (lastIntent !== undefined) out.stepCycle.push(event.at - lastIntent);
        if (event.type === 'run_failed') out.runsFailed += 1;
        else out.runsCompleted += 1;
        if (start !== undefined && event.type === 'run_completed') out.runWall.push(event.at - start);
        out.lastEnded = Math.max(out.lastEnded, event.at);
      }
    }
  }
  return out;
}

export function stepDistributions(timings: RunTimings) {
  return {
    intentToObservationMs: distribution(timings.intentToObservation),
    stepCycleMs: distribution(timings.stepCycle),
  };
}
