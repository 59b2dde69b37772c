import { execFileSync } from 'node:child_process';
import { JetStreamApiError } from '@nats-io/jetstream';
import { beforeAll, describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import {
  ConcurrencyConflict,
  createEventStore,
  EventOverLimits,
  EventTooLarge,
  JS_CODES,
  type EventStore,
} from '../src/index';
import { pauseProcess } from '@dura/testing';
import { useEventStore, useNatsConnections, useTestInfra } from './infra';
import { runEvents } from './run-events';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
const env = useEventStore(open);
let store: EventStore;
let rival: EventStore;

beforeAll(async () => {
  store = env.store;
  // A second replica on its own connection, racing the first.
  rival = createEventStore(await open());
});

describe('append', () => {
  it('starts a new run with expectedSeq 0 and returns the stream sequence of each event', async () => {
    const run = runEvents('new-run');
    const result = await store.append('new-run', [run.requested(), run.started()], { expectedSeq: 0 });

    expect(result.duplicate).toBe(false);
    expect(result.seqs).toHaveLength(2);
    expect(result.seqs[1]).toBeGreaterThan(result.seqs[0]!);
    expect(result.lastSeq).toBe(result.seqs[1]);
    const events = await store.read('new-run');
    expect(events.map((e) => [e.type, e.seq])).toEqual([
      ['run_requested', result.seqs[0]],
      ['run_started', result.seqs[1]],
    ]);
  });

  it('refuses a stale expectedSeq with a typed, retryable ConcurrencyConflict and leaves the log as it was', async () => {
    const run = runEvents('stale');
    const first = await store.append('stale', [run.requested(), run.started()], { expectedSeq: 0 });

    for (const stale of [0, first.seqs[0]!]) {
      const error = await store
        .append('stale', [run.thought()], { expectedSeq: stale })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConcurrencyConflict);
      expect(error).toBeInstanceOf(DuraError);
      expect(error).toMatchObject({
        name: 'ConcurrencyConflict',
        code: 'concurrency_conflict',
        retryable: true,
        runId: 'stale',
        expectedSeq: stale,
      });
      const cause = (error as Error).cause;
      expect(cause).toBeInstanceOf(JetStreamApiError);
      expect((cause as JetStreamApiError).code).toBe(JS_CODES.wrongLastSequence);
    }
    expect((await store.read('stale')).map((e) => e.seq)).toEqual(first.seqs);
  });

  it('lets exactly one of two concurrent appends with the same expectedSeq win (20 races)', async () => {
    for (let i = 0; i < 20; i += 1) {
      const runId = `race-${i}`;
      const a = runEvents(`${runId}-a`);
      const b = runEvents(`${runId}-b`);
      // Even rounds race to create the run, odd rounds race to extend it.
      const expectedSeq =
        i % 2 === 0 ? 0 : (await store.append(runId, [a.requested()], { expectedSeq: 0 })).lastSeq;

      const results = await Promise.allSettled([
        store.append(runId, [a.thought()], { expectedSeq }),
        rival.append(runId, [b.thought()], { expectedSeq }),
      ]);

      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won, runId).toHaveLength(1);
      expect(lost[0]?.reason, runId).toBeInstanceOf(ConcurrencyConflict);
      const log = await store.read(runId);
      expect(log, runId).toHaveLength(i % 2 === 0 ? 1 : 2);
      expect(log.at(-1)?.seq).toBe(won[0]?.value.lastSeq);
    }
  });

  it('reports a retried append with the same meta.id as a duplicate and keeps one copy', async () => {
    const run = runEvents('retried');
    const requested = run.requested();
    const first = await store.append('retried', [requested], { expectedSeq: 0 });

    // The same publish retried (e.g. the ack was lost), with the expectation the caller had then.
    const retry = await store.append('retried', [requested], { expectedSeq: 0 });
    expect(retry).toEqual({ seqs: first.seqs, lastSeq: first.lastSeq, duplicate: true });
    const unchecked = await rival.append('retried', [requested], { expectedSeq: 'any' });
    expect(unchecked.duplicate).toBe(true);

    expect(await store.read('retried')).toHaveLength(1);
  });

  it('completes a batch that was cut short: the stored prefix is deduplicated, the rest appended', async () => {
    const run = runEvents('cut-short');
    const [requested, started, thought] = [run.requested(), run.started(), run.thought()];
    await store.append('cut-short', [requested], { expectedSeq: 0 });

    const retry = await store.append('cut-short', [requested, started, thought], { expectedSeq: 0 });

    expect(retry.duplicate).toBe(true);
    const log = await store.read('cut-short');
    expect(log.map((e) => e.meta.id)).toEqual([requested, started, thought].map((e) => e.meta.id));
    expect(retry.seqs).toEqual(log.map((e) => e.seq));
  });

  it("appends without a sequence check when expectedSeq is 'any'", async () => {
    const run = runEvents('unchecked');
    const first = await store.append('unchecked', [run.requested(), run.started()], { expectedSeq: 0 });

    // The rival never folded the run; an unchecked append goes in after whatever is there.
    const result = await rival.append('unchecked', [run.thought()], { expectedSeq: 'any' });

    expect(result).toMatchObject({ duplicate: false, lastSeq: first.lastSeq + 1 });
    expect((await store.read('unchecked')).map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      'thought',
    ]);
  });
});

describe('an event larger than the server takes', () => {
  it('is refused for good with event_too_large, not retried as if the broker were away', async () => {
    const run = runEvents('too-large');
    // Strings within the run log's limits, together over the server's max_payload.
    const issues = Array.from({ length: 3 }, () => 'm'.repeat(400_000));
    const huge = run.make('run_rejected', { error: { code: 'x', message: 'm' }, issues });
    const appended = store.append('too-large', [huge], { expectedSeq: 0 });

    await expect(appended).rejects.toBeInstanceOf(EventTooLarge);
    await expect(appended).rejects.toMatchObject({ code: 'event_too_large', retryable: false });
    await expect(appended).rejects.toThrow(/larger than the NATS server's max_payload/);
    expect(await store.read('too-large')).toEqual([]);
  });
});

describe('an event over the run log limits', () => {
  it('is refused for good with event_over_limits before it reaches the log, however deep it nests', async () => {
    const run = runEvents('over-limits');
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    const nested = run.make('run_rejected', { error: { code: 'x', message: 'm' }, issues: deep as string[] });
    const appended = store.append('over-limits', [nested], { expectedSeq: 0 });
    await expect(appended).rejects.toBeInstanceOf(EventOverLimits);
    await expect(appended).rejects.toMatchObject({ code: 'event_over_limits', retryable: false });
    await expect(appended).rejects.toThrow(/deeper than 72 levels/);
    expect(await store.read('over-limits')).toEqual([]);
  });
});

describe('a pipelined append (a model turn: its thought and what it implies, sent at once)', () => {
  it('lands every event in order, each right behind the one before it', async () => {
    const run = runEvents('pipelined');
    const first = await store.append('pipelined', [run.requested(), run.started()], { expectedSeq: 0 });
    const turn = [run.thought(1), run.completed()];

    const result = await store.append('pipelined', turn, { expectedSeq: first.lastSeq, pipelined: true });

    expect(result.duplicate).toBe(false);
    expect(result.seqs).toEqual([first.lastSeq + 1, first.lastSeq + 2]);
    const events = await store.read('pipelined');
    expect(events.map((e) => [e.type, e.seq])).toEqual([
      ['run_requested', first.seqs[0]],
      ['run_started', first.seqs[1]],
      ['thought', result.seqs[0]],
      ['run_completed', result.seqs[1]],
    ]);
  });

  it('sends the rest one by one when another run’s event reaches the stream in between', async () => {
    const mine = await open();
    const other = runEvents('pipelined-other');
    // Another run's append issued right after the turn's first publish on the same connection, so the
    // server stores it between the two: the second event's `Nats-Expected-Last-Msg-Id` check fails.
    let interleaved = false;
    const js = new Proxy(mine.js, {
      get(target, prop, receiver) {
        if (prop !== 'publish') return Reflect.get(target, prop, receiver) as unknown;
        return (subject: string, data: Uint8Array, opts: object) => {
          const ack = target.publish(subject, data, opts);
          if (!interleaved) {
            interleaved = true;
            void target.publish('dura.run.pipelined-other', JSON.stringify(other.requested()), {
              msgID: 'pipelined-other:1',
            });
          }
          return ack;
        };
      },
    });
    const interleavedStore = createEventStore({ js, jsm: mine.jsm });
    const run = runEvents('pipelined-busy');
    const first = await store.append('pipelined-busy', [run.requested()], { expectedSeq: 0 });

    const result = await interleavedStore.append('pipelined-busy', [run.thought(1), run.completed()], {
      expectedSeq: first.lastSeq,
      pipelined: true,
    });

    expect(interleaved).toBe(true);
    expect(result.duplicate).toBe(false);
    const [thoughtSeq, completedSeq] = result.seqs as [number, number];
    expect(completedSeq).toBeGreaterThan(thoughtSeq + 1);
    const events = await store.read('pipelined-busy');
    expect(events.map((e) => [e.type, e.seq])).toEqual([
      ['run_requested', first.lastSeq],
      ['thought', thoughtSeq],
      ['run_completed', completedSeq],
    ]);
    expect((await store.read('pipelined-other')).map((e) => e.type)).toEqual(['run_requested']);
  });

  it('refuses a stale expectedSeq as a conflict and stores none of its events', async () => {
    const run = runEvents('pipelined-stale');
    const first = await store.append('pipelined-stale', [run.requested(), run.started()], { expectedSeq: 0 });

    const error = await store
      .append('pipelined-stale', [run.thought(1), run.completed()], {
        expectedSeq: first.seqs[0]!,
        pipelined: true,
      })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConcurrencyConflict);
    expect(error).toMatchObject({ runId: 'pipelined-stale', expectedSeq: first.seqs[0] });
    expect((await store.read('pipelined-stale')).map((e) => e.seq)).toEqual(first.seqs);
  });

  it('reports a retried turn as a duplicate without storing anything twice', async () => {
    const run = runEvents('pipelined-retry');
    const first = await store.append('pipelined-retry', [run.requested()], { expectedSeq: 0 });
    const turn = [run.thought(1), run.completed()];
    const once = await store.append('pipelined-retry', turn, { expectedSeq: first.lastSeq, pipelined: true });

    const again = await rival.append('pipelined-retry', turn, {
      expectedSeq: first.lastSeq,
      pipelined: true,
    });

    expect(again.duplicate).toBe(true);
    expect((await store.read('pipelined-retry')).map((e) => e.seq)).toEqual([first.lastSeq, ...once.seqs]);
  });
});

describe('an append that follows an event sent just before it (`follows`)', () => {
  it('lands right behind that event when it took the guessed sequence', async () => {
    const run = runEvents('follows-hit');
    const first = await store.append('follows-hit', [run.requested()], { expectedSeq: 0 });
    const ahead = run.started();
    // Sent and not awaited, as a worker sends an observation before the next turn.
    const sent = store.append('follows-hit', [ahead], { expectedSeq: first.lastSeq });

    const result = await store.append('follows-hit', [run.thought(1), run.completed()], {
      expectedSeq: first.lastSeq + 1,
      pipelined: true,
      follows: ahead.meta.id,
    });

    expect((await sent).lastSeq).toBe(first.lastSeq + 1);
    expect(result.seqs).toEqual([first.lastSeq + 2, first.lastSeq + 3]);
    expect((await store.read('follows-hit')).map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'run_completed',
    ]);
  });

  it('is a conflict when the event landed at another sequence, and stores nothing', async () => {
    const run = runEvents('follows-moved');
    const first = await store.append('follows-moved', [run.requested()], { expectedSeq: 0 });
    // Another run's event takes the guessed sequence first.
    await rival.append('follows-moved-other', [runEvents('follows-moved-other').requested()], {
      expectedSeq: 0,
    });
    const ahead = run.started();
    const sent = await store.append('follows-moved', [ahead], { expectedSeq: first.lastSeq });
    expect(sent.lastSeq).toBeGreaterThan(first.lastSeq + 1);

    const error = await store
      .append('follows-moved', [run.thought(1), run.completed()], {
        expectedSeq: first.lastSeq + 1,
        pipelined: true,
        follows: ahead.meta.id,
      })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConcurrencyConflict);
    expect((await store.read('follows-moved')).map((e) => e.type)).toEqual(['run_requested', 'run_started']);
  });

  it('is a conflict when another event of the run holds the guessed sequence instead, though the sequence matches', async () => {
    const run = runEvents('follows-taken');
    const first = await store.append('follows-taken', [run.requested()], { expectedSeq: 0 });
    // The event the append was to follow never landed; another event of the run sits at the guessed sequence.
    const never = run.started();
    const other = run.thought(0);
    const taken = await rival.append('follows-taken', [other], { expectedSeq: first.lastSeq });

    const error = await store
      .append('follows-taken', [run.thought(1)], {
        expectedSeq: taken.lastSeq,
        follows: never.meta.id,
      })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConcurrencyConflict);
    expect((await store.read('follows-taken')).map((e) => e.seq)).toEqual([first.lastSeq, taken.lastSeq]);
  });
});

describe('an append the stream acknowledges late', () => {
  it('is sent again under its msg-id and lands once: the caller gets its sequence, not a failure', async (ctx) => {
    if (infra().mode === 'containers') ctx.skip(); // SIGSTOP needs the spec's own local nats-server
    // The nats-server stops for 3 s (its disk stalled, say) while the append waits 2 s for each ack: the first
    // sending is stored when the server goes on, the second (and a third, on a slow machine) answered as a
    // duplicate. Without the second sending the append fails at 2 s.
    const slow = createEventStore({ ...(await open()), ackTimeoutMs: 2_000 });
    const run = runEvents('late-ack');
    await slow.append('late-ack', [run.requested()], { expectedSeq: 0 });
    const [before] = (await store.read('late-ack')).map((e) => e.seq);
    const paused = pauseProcess(natsServerPid(infra().nats.port), 3_000);
    try {
      const result = await slow.append('late-ack', [run.started()], { expectedSeq: before! });
      expect(result.seqs).toEqual([before! + 1]);
    } finally {
      await paused;
    }
    expect((await store.read('late-ack')).map((e) => e.type)).toEqual(['run_requested', 'run_started']);
  });
});

/** The pid of the spec's own nats-server, found by its port. */
function natsServerPid(port: number): number {
  const found = execFileSync('pgrep', ['-f', `nats-server .*-p ${port} `], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);
  if (found.length !== 1 || !Number.isInteger(found[0]))
    throw new Error(`no single nats-server on port ${port}: ${found.join(', ')}`);
  return found[0]!;
}
