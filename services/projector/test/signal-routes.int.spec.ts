import { describe, expect, it, vi } from 'vitest';
import { ApiErrorSchema, STREAMS, SUBJECTS } from '@dura/contracts';
import { RunScript, appendInterleaved, caughtUp } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

// The projector is not started: these routes answer from the log when the run is not projected yet.
const api = useProjectorApi(() => ({}), { startProjector: false });

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${api().http.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function lastSignal(): Promise<unknown> {
  const msg = await api().setup.jsm.streams.getMessage(STREAMS.requests, { last_by_subj: SUBJECTS.signal });
  return msg ? msg.json() : undefined;
}

describe('POST /runs/:id/signals and /runs/:id/cancel', () => {
  it('answer 404 run_not_found for a run with no events, and publish nothing', async () => {
    const before = await lastSignal();
    for (const [path, body] of [
      ['/runs/run-nobody/signals', { name: 'approve' }],
      ['/runs/run-nobody/cancel', {}],
    ] as const) {
      const answer = await post(path, body);
      expect(answer.status, path).toBe(404);
      expect(ApiErrorSchema.parse(answer.body).error).toMatchObject({
        code: 'run_not_found',
        message: expect.stringContaining('run-nobody') as string,
      });
    }
    expect(await lastSignal()).toEqual(before);
  });

  it('accept a signal for a run that is in the log but not projected yet (202)', async () => {
    await appendInterleaved(api().setup.store, [new RunScript('run-fresh').request().start()]);
    const answer = await post('/runs/run-fresh/signals', { name: 'go', signalId: 'fresh-1' });
    expect(answer).toMatchObject({ status: 202, body: { runId: 'run-fresh', signalId: 'fresh-1' } });
    expect(await lastSignal()).toMatchObject({ runId: 'run-fresh', name: 'go' });
  });

  it('answer 409 run_ended for a run that completed or was cancelled, and 202 for one that runs', async () => {
    const cancelled = new RunScript('run-cancelled').request().start().add('run_cancelled', { reason: 'x' });
    await appendInterleaved(api().setup.store, [
      RunScript.complete('run-done', 1),
      cancelled,
      new RunScript('run-live').request().start(),
    ]);
    await api().projector.start();
    await caughtUp(api().setup, api().projector.position);
    const before = await lastSignal();
    for (const [path, body] of [
      ['/runs/run-done/signals', { name: 'approve' }],
      ['/runs/run-done/cancel', {}],
      ['/runs/run-cancelled/cancel', { reason: 'again' }],
    ] as const) {
      const answer = await post(path, body);
      expect(answer.status, path).toBe(409);
      expect(ApiErrorSchema.parse(answer.body).error).toMatchObject({
        code: 'run_ended',
        message: expect.stringMatching(/is (completed|cancelled): it takes no more signals/) as string,
      });
    }
    expect(await lastSignal()).toEqual(before);
    expect((await post('/runs/run-live/cancel', { reason: 'enough' })).status).toBe(202);
    expect(await lastSignal()).toMatchObject({ runId: 'run-live', name: 'cancel' });
  });
});
