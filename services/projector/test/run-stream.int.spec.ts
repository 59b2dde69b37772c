import { describe, expect, it, vi } from 'vitest';
import { ApiErrorSchema, RunEventSchema, runSubject, type NewEvent, type RunEvent } from '@dura/contracts';
import { RunLog } from '@dura/core/testing';
import { openSse, type SseConnection } from '@dura/testing';
import { RunScript, asJson, caughtUp, sleep } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const KEEPALIVE_MS = 200;

const api = useProjectorApi(() => ({ keepaliveMs: KEEPALIVE_MS }));

function thirtyStepRun(runId: string): NewEvent[] {
  const log = new RunLog(runId).request().start();
  for (let step = 1; step <= 30; step += 1)
    log
      .think([{ tool: 'echo', args: { step } }])
      .intents()
      .complete(`call-${step}`);
  return log.finish().events.map(({ seq: _seq, ...event }): NewEvent => event);
}

const streamUrl = (runId: string, query = '') => `${api().http.url}/runs/${runId}/stream${query}`;

/** What one connection delivered: events (each checked against its SSE id and event name), comments, `end`. */
interface Delivery {
  events: RunEvent[];
  comments: string[];
  end?: unknown;
  closedByServer: boolean;
}

/** Reads until `end` (then checks the server closes), or drops the connection after `dropAfter` events. */
async function read(sse: SseConnection, dropAfter?: number): Promise<Delivery> {
  const out: Delivery = { events: [], comments: [], closedByServer: false };
  for await (const message of sse.messages) {
    if (message.comment !== undefined) out.comments.push(message.comment);
    else if (message.event === 'end') {
      out.end = JSON.parse(message.data ?? 'null');
      out.closedByServer = (await sse.messages.next()).done === true;
      return out;
    } else {
      const event = RunEventSchema.parse(JSON.parse(message.data ?? 'null'));
      expect([message.id, message.event]).toEqual([String(event.seq), event.type]);
      out.events.push(event);
      if (out.events.length === dropAfter) {
        sse.drop();
        return out;
      }
    }
  }
  return out;
}

describe('GET /runs/:id/stream', () => {
  it('resumes a mid-run stream dropped twice with Last-Event-ID, ending with exactly the run’s events', async () => {
    const runId = 'run-live';
    const events = thirtyStepRun(runId);
    let appended = 0;
    let last = 0;
    const appendOne = async () => {
      last = (await api().setup.store.append(runId, [events[appended]!], { expectedSeq: last })).lastSeq;
      appended += 1;
    };
    while (appended < 20) await appendOne();
    const appending = (async () => {
      while (appended < events.length) {
        await sleep(20);
        await appendOne();
      }
    })();

    const first = await openSse(streamUrl(runId));
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const part1 = await read(first, 30);
    const appendedAtFirstDrop = appended;
    const second = await openSse(streamUrl(runId), part1.events.at(-1)!.seq);
    const part2 = await read(second, 30);
    const appendedAtSecondDrop = appended;
    const third = await openSse(streamUrl(runId), part2.events.at(-1)!.seq);
    const part3 = await read(third);
    await appending;

    // Both drops happened while the run was still appending: each resume joined a live run.
    expect(appendedAtFirstDrop).toBeLessThan(events.length);
    expect(appendedAtSecondDrop).toBeLessThan(events.length);
    const received = [...part1.events, ...part2.events, ...part3.events];
    const logged = await api().setup.store.read(runId);
    expect(logged).toHaveLength(events.length);
    expect(received.map((e) => e.seq)).toEqual(logged.map((e) => e.seq));
    expect(received).toEqual(asJson(logged));
    expect(part3).toMatchObject({ end: { status: 'completed' }, closedByServer: true });
  });

  it('starts at fromSeq, and Last-Event-ID wins over it', async () => {
    const runId = 'run-from';
    await api().setup.store.append(runId, RunScript.complete(runId, 3).events, { expectedSeq: 0 });
    const logged = await api().setup.store.read(runId);
    const fromQuery = await read(await openSse(streamUrl(runId, `?fromSeq=${logged[4]!.seq}`)));
    expect(fromQuery.events).toEqual(asJson(logged.slice(4)));
    const both = await read(await openSse(streamUrl(runId, `?fromSeq=${logged[4]!.seq}`), logged[8]!.seq));
    expect(both.events).toEqual(asJson(logged.slice(9)));
    expect(both.end).toEqual({ status: 'completed' });
  });

  it('answers a client resuming after the terminal event with `end` at once', async () => {
    const runId = 'run-over';
    await api().setup.store.append(runId, RunScript.complete(runId, 1).events, { expectedSeq: 0 });
    const lastSeq = (await api().setup.store.read(runId)).at(-1)!.seq;
    expect(await read(await openSse(streamUrl(runId), lastSeq))).toEqual({
      events: [],
      comments: [],
      end: { status: 'completed' },
      closedByServer: true,
    });
    // The same once the terminal event is no longer the newest on the run's subject (a late observation).
    const late = new RunScript(runId).add('signal_received', { signalId: 's', name: 'late' }).events[0]!;
    await api().setup.store.append(runId, [{ ...late, meta: { ...late.meta, id: 'late' } }], {
      expectedSeq: 'any',
    });
    await caughtUp(api().setup, api().projector.position);
    expect((await read(await openSse(streamUrl(runId, `?fromSeq=${lastSeq + 1}`)))).end).toEqual({
      status: 'completed',
    });
  });

  it('keeps an idle stream alive with comments, then delivers what comes live and ends', async () => {
    const runId = 'run-idle';
    const script = new RunScript(runId)
      .request()
      .start()
      .add('wait_requested', { waitId: 'w', kind: 'signal' });
    await api().setup.store.append(runId, script.events, { expectedSeq: 0 });
    const sse = await openSse(streamUrl(runId));
    const history: RunEvent[] = [];
    let keepalives = 0;
    // next() by hand: leaving a for-await loop would close the connection.
    while (keepalives < 2) {
      const next = await sse.messages.next();
      if (next.done) throw new Error('the stream closed while the run was waiting');
      if (next.value.comment === 'keepalive') keepalives += 1;
      else history.push(RunEventSchema.parse(JSON.parse(next.value.data ?? 'null')));
    }
    expect(history.map((e) => e.type)).toEqual(['run_requested', 'run_started', 'wait_requested']);
    const cancel = new RunScript(runId).add('run_cancelled', { reason: 'no one came' }).events[0]!;
    await api().setup.store.append(runId, [{ ...cancel, meta: { ...cancel.meta, id: 'cancel' } }], {
      expectedSeq: 'any',
    });
    const rest = await read(sse);
    expect(rest.events.map((e) => e.type)).toEqual(['run_cancelled']);
    expect(rest).toMatchObject({ end: { status: 'cancelled' }, closedByServer: true });
  });

  it('skips, with a comment, a message on the run’s subject that is not one of its events', async () => {
    const runId = 'run-corrupt';
    const script = RunScript.complete(runId, 1);
    await api().setup.store.append(runId, script.events.slice(0, 2), { expectedSeq: 'any' });
    const garbage = await api().setup.js.publish(runSubject(runId), 'not json');
    await api().setup.store.append(runId, script.events.slice(2), { expectedSeq: 'any' });
    const delivered = await read(await openSse(streamUrl(runId)));
    expect(delivered.events.map((e) => e.meta.id)).toEqual(script.events.map((e) => e.meta.id));
    // Keepalive comments come on a clock (KEEPALIVE_MS here), so a slow machine may see one: not what is tested.
    expect(delivered.comments.filter((comment) => comment !== 'keepalive')).toEqual([
      expect.stringMatching(
        new RegExp(`^seq ${garbage.seq} skipped, not a valid event of this run: .*not JSON`),
      ),
    ]);
    expect(delivered.end).toEqual({ status: 'completed' });
  });

  it('refuses an unknown run, a bad Last-Event-ID or fromSeq, and a run id that is not one, as JSON', async () => {
    const cases: [string, number, string, RegExp][] = [
      [
        streamUrl('run-nobody'),
        404,
        'run_not_found',
        /^no run run-nobody: its log dura\.run\.run-nobody holds no event/,
      ],
      [streamUrl('run-live', '?fromSeq=-1'), 400, 'bad_query', /fromSeq must be an integer >= 0/],
      [streamUrl('run.*'), 400, 'bad_run_id', /"run\.\*" is not a run id/],
    ];
    for (const [url, status, code, message] of cases) {
      const sse = await openSse(url);
      expect(sse.status).toBe(status);
      expect(ApiErrorSchema.parse(sse.error).error).toMatchObject({
        code,
        message: expect.stringMatching(message),
      });
    }
    const response = await fetch(streamUrl('run-live'), { headers: { 'last-event-id': 'latest' } });
    expect(response.status).toBe(400);
    expect(ApiErrorSchema.parse(await response.json()).error.message).toBe(
      'header Last-Event-ID (the seq of the last event received) must be an integer >= 0, got "latest"',
    );
  });
});
