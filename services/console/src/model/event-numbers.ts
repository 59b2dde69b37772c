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

/**
 * Where time travel stands: the chosen event, else (unchosen) the run's last one, and its place (0-based)
 * among `count` events. Unchosen, it stands at the last place from the first screen on, before the run's
 * state is in: the picker's number does not jump when the state arrives, under a hand typing into it.
 * `at` is undefined until there is an event to fold to (`lastSeq`, the state's, while the events are read).
 */
export function travelPosition(
  events: readonly Pick<RunEvent, 'seq'>[],
  count: number,
  complete: boolean,
  selected: number | undefined,
  lastSeq: number | undefined,
): { at: number | undefined; index: number } {
  const at = selected ?? (lastSeq === undefined ? undefined : complete ? events.at(-1)?.seq : lastSeq);
  const found = at === undefined ? -1 : events.findIndex((e) => e.seq === at);
  return { at, index: found >= 0 ? found : Math.max(0, count - 1) };
}
