import { beforeAll, describe, expect, it, vi } from 'vitest';
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { runSubject } from '@dura/contracts';
import {
  applyBatch,
  heldStates,
  projectionErrors,
  readCheckpoint,
  RUN_STATE_LISTS,
  runEvents,
  runItems,
  runs,
  summarize,
  type RunStateList,
  type Projector,
} from '../src/index';
import {
  RunScript,
  appendInterleaved,
  asJson,
  caughtUp,
  foldLog,
  rowColumns,
  snapshot,
  storedRun,
  streamMessages,
} from './support';
import { useProjectors } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const file = useProjectors();
const setup = () => file.setup();
let projector: Projector | undefined;

// Small batches, so one pass spans several transactions.
const startProjector = async () => (await file.start('projector', { batchSize: 4 })).projector;

beforeAll(async () => {
  projector = await startProjector();
});

describe('the projection', () => {
  it('folds events appended with the event store into runs and run_events', async () => {
    const scripts = [
      RunScript.complete('run-a', 3),
      RunScript.complete('run-b', 1),
      new RunScript('run-c').request([], { tags: ['nightly'], metadata: { team: 'web' } }).start(),
    ];
    await appendInterleaved(setup().store, scripts);
    const position = await caughtUp(setup(), projector!.position);
    expect(await readCheckpoint(setup().db)).toBe(position);

    for (const script of scripts) {
      const logged = await setup().store.read(script.runId);
      expect(logged).toHaveLength(script.events.length);
      const row = await storedRun(setup().db, script.runId);
      const folded = foldLog(await streamMessages(setup())).get(script.runId);
      expect(row?.state).toEqual(asJson(folded));
      expect(row).toMatchObject({
        status: folded?.status,
        lastSeq: logged.at(-1)?.seq,
        eventCount: logged.length,
        steps: folded?.steps,
      });
      // Every other column is the fold's summary, written in the same statement.
      expect(rowColumns(row!)).toEqual(summarize(script.runId, folded!));
      const events = await setup()
        .db.select()
        .from(runEvents)
        .where(eq(runEvents.runId, script.runId))
        .orderBy(asc(runEvents.seq));
      expect(events.map((e) => e.event)).toEqual(asJson(logged));
      expect(events.map((e) => [e.seq, e.type])).toEqual(logged.map((e) => [e.seq, e.type]));
    }
    expect((await setup().db.select().from(runs).where(eq(runs.runId, 'run-a')))[0]?.status).toBe(
      'completed',
    );
    expect((await setup().db.select().from(runs).where(eq(runs.runId, 'run-c')))[0]?.status).toBe('running');
  });

  it('treats a redelivery of the same messages through applyBatch as a no-op', async () => {
    const before = await snapshot(setup().db);
    const messages = await streamMessages(setup());
    const checkpoint = await readCheckpoint(setup().db);

    expect(await applyBatch(setup().db, messages)).toEqual({ checkpoint, applied: 0 });
    expect(await applyBatch(setup().db, messages.slice(-3))).toEqual({ checkpoint, applied: 0 });
    expect(await applyBatch(setup().db, [])).toEqual({ checkpoint, applied: 0 });
    expect(await snapshot(setup().db)).toEqual(before);
  });

  it('applies only the unseen tail of a batch that overlaps the checkpoint', async () => {
    await projector?.stop();
    projector = undefined;
    const script = RunScript.complete('run-overlap', 1);
    await appendInterleaved(setup().store, [script]);
    const messages = await streamMessages(setup());
    const checkpoint = await readCheckpoint(setup().db);
    const fresh = messages.filter((msg) => msg.seq > checkpoint);
    expect(fresh).toHaveLength(script.events.length);

    const result = await applyBatch(setup().db, messages.slice(-(fresh.length + 4)));
    expect(result).toEqual({ checkpoint: messages.at(-1)?.seq, applied: fresh.length });
    const once = await snapshot(setup().db);
    expect(await applyBatch(setup().db, messages)).toEqual({ checkpoint: messages.at(-1)?.seq, applied: 0 });
    expect(await snapshot(setup().db)).toEqual(once);
    expect(once.runs.find((row) => row.runId === 'run-overlap')?.state).toEqual(
      asJson(foldLog(messages).get('run-overlap')),
    );
  });
});

describe('the states a projector holds', () => {
  /** The stream after `script` is appended, and its messages past the stored checkpoint. */
  const appended = async (script: RunScript) => {
    await appendInterleaved(setup().store, [script]);
    const messages = await streamMessages(setup());
    const checkpoint = await readCheckpoint(setup().db);
    return { messages, fresh: messages.filter((msg) => msg.seq > checkpoint) };
  };

  it('given two writers taking turns on a run, one holding states: each batch folds onto the stored state', async () => {
    const { messages, fresh } = await appended(RunScript.complete('run-turns', 4));
    expect(fresh.length).toBeGreaterThanOrEqual(8);
    const held = heldStates();
    const turns = [0, 1, 2, 3].map((i) => fresh.slice((i * fresh.length) / 4, ((i + 1) * fresh.length) / 4));
    // This projector, another one (holding nothing), then this one again: what it holds is a turn behind.
    await applyBatch(setup().db, turns[0]!, held);
    await applyBatch(setup().db, turns[1]!);
    await applyBatch(setup().db, turns[2]!, held);
    await applyBatch(setup().db, turns[3]!, held);
    const row = await storedRun(setup().db, 'run-turns');
    expect(row?.state).toEqual(asJson(foldLog(messages).get('run-turns')));
    expect(row?.lastSeq).toBe(fresh.at(-1)?.seq);
  });

  it('given a long run: a batch writes the list entries it added or changed, not the ones before, and runs.state holds neither lists nor request', async () => {
    const { messages, fresh } = await appended(RunScript.complete('run-long', 8));
    const half = Math.floor(fresh.length / 2);
    const held = heldStates();
    const versions = async () => {
      const rows = await setup()
        .db.select({ list: runItems.list, idx: runItems.idx, xmin: sql<string>`xmin::text` })
        .from(runItems)
        .where(eq(runItems.runId, 'run-long'));
      return new Map(rows.map((r) => [`${r.list}/${r.idx}`, r.xmin]));
    };

    await applyBatch(setup().db, fresh.slice(0, half), held);
    const early = await versions();
    const atHalf = foldLog(fresh.slice(0, half)).get('run-long')!;
    await applyBatch(setup().db, fresh.slice(half), held);
    const late = await versions();

    // Entries the second batch did not touch are the rows the first one wrote (same row version).
    const folded = foldLog(messages).get('run-long')!;
    const untouched = [...early.keys()].filter((key) => {
      const [list, idx] = key.split('/') as [RunStateList, string];
      return JSON.stringify(atHalf[list][Number(idx)]) === JSON.stringify(folded[list][Number(idx)]);
    });
    expect(untouched.length).toBeGreaterThanOrEqual(3);
    for (const key of untouched) expect(late.get(key)).toBe(early.get(key));
    expect(late.size).toBe(folded.calls.length + folded.turns.length + folded.signals.length);
    const [row] = await setup()
      .db.select({ state: runs.state, request: runs.request })
      .from(runs)
      .where(eq(runs.runId, 'run-long'));
    for (const list of RUN_STATE_LISTS) expect(row?.state).not.toHaveProperty(list);
    expect(row?.state).not.toHaveProperty('request');
    expect(row?.request).toEqual(asJson(folded.request));
    expect((await storedRun(setup().db, 'run-long'))?.state).toEqual(asJson(folded));
  });
});

describe('events the fold cannot apply', () => {
  it('land in projection_errors without stopping the projection of later events', async () => {
    projector = await startProjector();
    const runId = 'run-poisoned';
    const script = new RunScript(runId).request().start();
    await appendInterleaved(setup().store, [script]);
    // A second run_started: valid JSON, valid event, impossible for a running run.
    const restart = new RunScript(runId).add('run_started', {}).events[0]!;
    const invalid = await setup().store.append(
      runId,
      [{ ...restart, meta: { ...restart.meta, id: 'restarted' } }],
      { expectedSeq: 'any' },
    );
    expect(invalid.duplicate).toBe(false);
    const garbage = await setup().js.publish(
      runSubject(runId),
      new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x00]),
    );
    const notAnEvent = await setup().js.publish(runSubject(runId), JSON.stringify({ hello: 'world' }));
    const rest = RunScript.complete(runId, 2);
    for (const event of rest.events.slice(2)) {
      await setup().store.append(
        runId,
        [{ ...event, meta: { ...event.meta, id: `${event.meta.id}-after` } }],
        {
          expectedSeq: 'any',
        },
      );
    }
    await caughtUp(setup(), projector.position);

    const errors = await setup()
      .db.select()
      .from(projectionErrors)
      .where(eq(projectionErrors.runId, runId))
      .orderBy(asc(projectionErrors.seq));
    expect(errors.map((e) => [e.seq, e.code])).toEqual([
      [invalid.lastSeq, 'invalid_transition'],
      [garbage.seq, 'corrupt_event'],
      [notAnEvent.seq, 'corrupt_event'],
    ]);
    expect(errors[0]?.message).toMatch(/run_started at seq \d+ cannot apply to a run that is running/);
    expect(errors[1]?.message).toMatch(/not UTF-8/);

    const row = await storedRun(setup().db, runId);
    expect(row?.status).toBe('completed');
    expect(row?.state).toEqual(asJson(foldLog(await streamMessages(setup())).get(runId)));
    const projected = await setup()
      .db.select({ seq: runEvents.seq })
      .from(runEvents)
      .where(eq(runEvents.runId, runId));
    const skipped = new Set(errors.map((e) => e.seq));
    expect(projected.some((e) => skipped.has(e.seq))).toBe(false);
    expect(projected).toHaveLength(2 + rest.events.length - 2);
  });

  it('refuse an event whose run id is not the run of its subject, leaving that other run untouched', async () => {
    const victim = RunScript.complete('run-victim', 1);
    await appendInterleaved(setup().store, [victim]);
    await caughtUp(setup(), projector!.position);
    const before = await storedRun(setup().db, 'run-victim');
    expect(before?.status).toBe('completed');

    // A valid first event, but for run-victim, published on another run's subject.
    const stray = new RunScript('run-victim').request().events[0]!;
    const ack = await setup().js.publish(
      runSubject('run-intruder'),
      JSON.stringify({ ...stray, meta: { ...stray.meta, id: 'stray' } }),
    );
    await caughtUp(setup(), projector!.position);

    const after = await storedRun(setup().db, 'run-victim');
    expect(after).toEqual(before);
    const [error] = await setup().db.select().from(projectionErrors).where(eq(projectionErrors.seq, ack.seq));
    expect(error).toMatchObject({ runId: 'run-intruder', code: 'contract_violation' });
    expect(await setup().db.select().from(runEvents).where(eq(runEvents.seq, ack.seq))).toEqual([]);
  });

  it('refuse text Postgres cannot store (U+0000, a lone surrogate) instead of failing every batch after it', async () => {
    const nul = new RunScript('run-nul').request().events[0]!;
    const withNul = {
      ...nul,
      meta: { ...nul.meta, id: 'nul' },
      data: { ...nul.data, request: { ...(nul.data as { request: object }).request, input: 'a\u0000b' } },
    };
    const nulAck = await setup().js.publish(runSubject('run-nul'), JSON.stringify(withNul));
    const lone = new RunScript('run-lone').request().events[0]!;
    const loneAck = await setup().js.publish(
      runSubject('run-lone'),
      JSON.stringify({ ...lone, meta: { ...lone.meta, id: 'lone', correlationId: '\ud800' } }),
    );
    // An unknown type is refused anyway; its reason quotes the type, NUL and all.
    const typeAck = await setup().js.publish(
      runSubject('run-nul-type'),
      JSON.stringify({ ...lone, type: 'x\u0000y', meta: { ...lone.meta, runId: 'run-nul-type' } }),
    );
    const after = RunScript.complete('run-after-nul', 1);
    await appendInterleaved(setup().store, [after]);
    await caughtUp(setup(), projector!.position);

    const errors = await setup()
      .db.select()
      .from(projectionErrors)
      .where(inArray(projectionErrors.seq, [nulAck.seq, loneAck.seq, typeAck.seq]))
      .orderBy(asc(projectionErrors.seq));
    expect(errors.map((e) => [e.runId, e.code])).toEqual([
      ['run-nul', 'contract_violation'],
      ['run-lone', 'contract_violation'],
      ['run-nul-type', 'corrupt_event'],
    ]);
    expect(errors[0]?.message).toMatch(
      /holds text the read model cannot store: data\.request\.input: holds U\+0000/,
    );
    expect(errors[1]?.message).toMatch(/meta\.correlationId: holds U\+0000 or a lone UTF-16 surrogate/);
    expect(errors[2]?.message).toContain('unknown type "x\ufffdy"');
    expect(
      await setup()
        .db.select()
        .from(runs)
        .where(inArray(runs.runId, ['run-nul', 'run-lone'])),
    ).toEqual([]);
    const [row] = await setup().db.select().from(runs).where(eq(runs.runId, 'run-after-nul'));
    expect(row?.status).toBe('completed');
  });
});
