// Run-log messages for fuzz-inputs.e2e.spec.ts: only the projector reads other runs' subjects, and it may not
// publish, so each bad event must become one row of its error table and nothing else.
import fc from 'fast-check';
import { decodeEvent, runSubject } from '@dura/contracts';
import { evolve, initialRunState } from '@dura/core';
import { arbAnyEvent } from '@dura/core/testing';
import { arbBinary, arbWrongValue, unique, withPollutionKeys, type FuzzMessage } from './fuzz-messages';

const encoder = new TextEncoder();
type Body = Record<string, unknown>;

/** What the projector makes of `body` as the first message on a run subject: only an accepted event passes. */
function projectsCleanly(runId: string, body: Uint8Array): boolean {
  try {
    const event = decodeEvent(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)), 1);
    if (event.meta.runId !== runId) return false;
    evolve(initialRunState(), event);
    return !JSON.stringify(event).includes('\\u0000');
  } catch {
    return false;
  }
}

/**
 * Messages on run subjects of their own (`dura.run.fz-log-<i>`): events of every type out of order, with a
 * run id naming another run (one of `victims`), newer versions, unknown types, broken envelopes, text
 * Postgres cannot store, and garbage. None may be projected; each becomes one projection error.
 */
export function runLogMessages(count: number, seed: number, victims: readonly string[]): FuzzMessage[] {
  const arbRecipe = fc.tuple(arbAnyEvent(1), fc.nat(9), fc.constantFrom(...victims), arbWrongValue);
  const arbBody = fc.oneof(
    {
      weight: 6,
      arbitrary: arbRecipe.map((recipe) => (runId: string) => encoder.encode(eventText(runId, ...recipe))),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 100 }).map((t) => () => encoder.encode(t)) },
    { weight: 1, arbitrary: arbBinary.map((bytes) => () => bytes) },
  );
  return fc
    .sample(arbBody, { seed, numRuns: count * 2 })
    .flatMap((build) => {
      const runId = unique('fz-log');
      const body = build(runId);
      if (projectsCleanly(runId, body)) return [];
      return [{ subject: runSubject(runId), body, outcome: { kind: 'projection_error' as const } }];
    })
    .slice(0, count);
}

/** One schema-valid event of any type, moved to `runId`, then broken in the way `how` picks. */
function eventText(runId: string, event: object, how: number, victim: string, wrong: unknown): string {
  const e = JSON.parse(JSON.stringify(event).replaceAll('"run-1"', JSON.stringify(runId))) as Body & {
    meta: Body;
  };
  delete e['seq'];
  if (how === 0) e.meta['runId'] = victim;
  if (how === 1) e['v'] = 99;
  if (how === 2) e['type'] = typeof wrong === 'string' ? wrong : 'fuzz_event';
  if (how === 3) e['data'] = wrong;
  if (how === 4) e.meta = { runId };
  if (how === 5) return withPollutionKeys(JSON.stringify(e), '__proto__');
  if (how === 6) {
    // The fold accepts this as a run's first event, but Postgres cannot store U+0000 in text or jsonb.
    e['type'] = 'run_rejected';
    e['v'] = 1;
    e['data'] = { error: { code: 'boom', message: 'nul\u0000inside' } };
  }
  return JSON.stringify(e);
}
