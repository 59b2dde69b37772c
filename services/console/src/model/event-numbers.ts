import type { RunEvent } from '@dura/contracts';

/**
 * Each event's number within its run, from 1 (the page shows these: a run's first event is #1, whatever its
 * place in the shared stream), looked up by the event's stream sequence, which the API keeps using.
 */
export function eventNumbers(events: readonly Pick<RunEvent, 'seq'>[]): (seq: number) => number | undefined {
  const bySeq = new Map<number, number>();
  events.forEach((event, index) => bySeq.set(event.seq, index + 1));
  return (seq) => bySeq.get(seq);
}

/** `#n` for an event of the run; its stream sequence when the page does not hold it (yet). */
export function eventLabel(numberOf: (seq: number) => number | undefined, seq: number): string {
  const n = numberOf(seq);
  return n === undefined ? `seq ${seq}` : `#${n}`;
}
