import { describe, expect, it } from 'vitest';
import { ContractViolation, SignalRequestSchema, STREAMS, SUBJECTS } from '@dura/contracts';
import { RunNotFound } from '../src/index';
import { newLog, toNew, useClientFixture } from './infra';

const fixture = useClientFixture();

async function storedSignals(): Promise<number> {
  const info = await fixture().jsm.streams.info(STREAMS.requests, { subjects_filter: SUBJECTS.signal });
  return info.state.subjects?.[SUBJECTS.signal] ?? 0;
}

/** The last signal request on `dura.signal`, and its msg-id. */
async function lastSignal() {
  const msg = await fixture().jsm.streams.getMessage(STREAMS.requests, { last_by_subj: SUBJECTS.signal });
  if (!msg) throw new Error('no signal stored');
  return { body: SignalRequestSchema.parse(msg.json()), msgId: msg.header.get('Nats-Msg-Id') };
}

async function existingRun(runId: string): Promise<void> {
  await fixture().store.append(runId, toNew(newLog(runId).request().start().events), { expectedSeq: 0 });
}

describe('signal', () => {
  it('publishes a validated signal request on dura.signal, idempotent on its signal id', async () => {
    await existingRun('signalled');
    const before = await storedSignals();

    const sent = await fixture().client.signal('signalled', 'approve', {
      payload: { by: 'ops' },
      signalId: 'sig-1',
    });
    const again = await fixture().client.signal('signalled', 'approve', { signalId: 'sig-1' });

    expect(sent).toEqual({ signalId: 'sig-1', duplicate: false });
    expect(again).toEqual({ signalId: 'sig-1', duplicate: true });
    expect(await storedSignals()).toBe(before + 1);
    expect(await lastSignal()).toEqual({
      body: { v: 1, runId: 'signalled', signalId: 'sig-1', name: 'approve', payload: { by: 'ops' } },
      msgId: 'signal:signalled:sig-1',
    });
  });

  it('with mustExist, refuses a run with no events with RunNotFound and sends nothing', async () => {
    const before = await storedSignals();

    const error = await fixture()
      .client.signal('ghost', 'approve', { mustExist: true })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RunNotFound);
    expect(await storedSignals()).toBe(before);
  });

  it('refuses an empty signal name with a ContractViolation naming the field', async () => {
    await existingRun('bad-name');
    const error = await fixture()
      .client.signal('bad-name', '')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ContractViolation);
    expect((error as ContractViolation).issues).toEqual([expect.stringMatching(/^name: /)]);
  });
});

describe('cancel', () => {
  it('sends the signal named cancel with payload { reason }', async () => {
    await existingRun('to-cancel');

    const sent = await fixture().client.cancel('to-cancel', { reason: 'wrong branch' });

    expect(sent.duplicate).toBe(false);
    expect((await lastSignal()).body).toEqual({
      v: 1,
      runId: 'to-cancel',
      signalId: sent.signalId,
      name: 'cancel',
      payload: { reason: 'wrong branch' },
    });
  });

  it('gives a default reason, and is idempotent on its signal id', async () => {
    await existingRun('cancel-twice');

    const first = await fixture().client.cancel('cancel-twice', { signalId: 'stop-1' });
    const second = await fixture().client.cancel('cancel-twice', { signalId: 'stop-1', reason: 'again' });

    expect([first.duplicate, second.duplicate]).toEqual([false, true]);
    expect((await lastSignal()).body.payload).toEqual({ reason: 'cancelled by a client' });
  });

  it('with mustExist, refuses a run with no events', async () => {
    await expect(fixture().client.cancel('nobody-here', { mustExist: true })).rejects.toBeInstanceOf(
      RunNotFound,
    );
  });
});
