import { describe, expect, it, vi } from 'vitest';
import {
  DeadLetterSchema,
  SIGNAL_VERSION,
  STREAMS,
  SUBJECTS,
  type DeadLetter,
  type NewEvent,
  type RunEvent,
} from '@dura/contracts';
import { fold } from '@dura/core';
import { RunLog } from '@dura/core/testing';
import { useTestInfra } from '@dura/testing';
import { createScriptedModel } from '@dura/agents';
import { chargeSteps, scriptedRequest, simulateRun } from '@dura/agents/testing';
import { eventually, storedMessages, typesOf } from './support';
import { usePlanner } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlanner(infra);

async function store(events: readonly RunEvent[]): Promise<RunEvent[]> {
  const fresh: NewEvent[] = events.map(({ seq: _seq, ...event }) => event);
  await env.setup.store.append(events[0]!.meta.runId, fresh, { expectedSeq: 0 });
  return env.setup.store.read(events[0]!.meta.runId);
}

async function cancel(runId: string, signalId: string, payload?: object): Promise<void> {
  const body = { v: SIGNAL_VERSION, runId, signalId, name: 'cancel', ...(payload ? { payload } : {}) };
  await env.setup.js.publish(SUBJECTS.signal, JSON.stringify(body), { msgID: `signal:${runId}:${signalId}` });
}

async function untilCancelled(runId: string): Promise<RunEvent[]> {
  return eventually(async () => {
    const log = await env.setup.store.read(runId);
    return log.at(-1)?.type === 'run_cancelled' ? log : undefined;
  }, `${runId} to be cancelled`);
}

describe('the cancel signal', () => {
  it('cancels a running run with a call in flight, recording the reason after the signal', async () => {
    const { events } = await simulateRun(scriptedRequest('cancel-1', chargeSteps(3)), createScriptedModel());
    const cut = events.findIndex((e) => e.type === 'tool_call_requested' && e.data.step === 2);
    await store(events.slice(0, cut + 1));
    await cancel('cancel-1', 'c-1', { reason: 'customer changed their mind' });
    const log = await untilCancelled('cancel-1');
    expect(typesOf(log.slice(-2))).toEqual(['signal_received', 'run_cancelled']);
    expect(log.at(-1)).toMatchObject({
      data: { reason: 'customer changed their mind' },
      meta: { causationId: log.at(-2)!.meta.id },
    });
    // The call still in flight reports later: the log records it, and the run stays cancelled.
    const observation = events[cut + 1]!;
    const { seq: _seq, ...late } = observation;
    await env.setup.store.append('cancel-1', [late], { expectedSeq: log.at(-1)!.seq });
    const state = fold(await env.setup.store.read('cancel-1'));
    expect(state).toMatchObject({ status: 'cancelled' });
    expect(state.calls[1]).toMatchObject({ status: 'completed' });
  });

  it('cancels a run waiting for another signal', async () => {
    const waiting = new RunLog('cancel-2').request(chargeSteps(1)).start();
    waiting.add('wait_requested', { waitId: 'w-1', kind: 'signal', signal: 'approve' });
    const log = await store(waiting.events);
    expect(fold(log).status).toBe('waiting');
    await cancel('cancel-2', 'c-2');
    const cancelled = await untilCancelled('cancel-2');
    expect(cancelled.at(-1)).toMatchObject({ data: { reason: 'cancelled by signal c-2 (no reason given)' } });
  });

  it('for a finished run is dead-lettered with the reason, and the log is left alone', async () => {
    const { events } = await simulateRun(scriptedRequest('cancel-3', chargeSteps(1)), createScriptedModel());
    const log = await store(events);
    expect(fold(log).status).toBe('completed');
    await cancel('cancel-3', 'c-3', { reason: 'too late' });
    const letter = await eventually(async () => {
      const found = await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.signals');
      const letters: DeadLetter[] = found.map((msg) => DeadLetterSchema.parse(msg.json()));
      return letters.find((l) => l.payload.includes('"c-3"'));
    }, 'the cancel of a finished run to be dead-lettered');
    expect(letter.error).toEqual({
      code: 'run_finished',
      message: 'run cancel-3 is completed; signal cancel was not delivered',
    });
    expect(await env.setup.store.read('cancel-3')).toEqual(log);
  });

  it('waits for a run that is requested but not started, instead of appending where the fold refuses it', async () => {
    const requested = new RunLog('cancel-4').request(chargeSteps(1));
    const log = await store(requested.events);
    expect(fold(log).status).toBe('pending');
    await cancel('cancel-4', 'c-4', { reason: 'early' });
    // The signal is retried, not recorded: the log still folds.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(typesOf(await env.setup.store.read('cancel-4'))).toEqual(['run_requested']);
    // Once the run starts (as the intake would start it), the retried signal lands and cancels it.
    const started = requested.start().events.at(-1)!;
    const { seq: _seq, ...event } = started;
    await env.setup.store.append('cancel-4', [event], { expectedSeq: log.at(-1)!.seq });
    const cancelled = await untilCancelled('cancel-4');
    expect(typesOf(cancelled)).toEqual(['run_requested', 'run_started', 'signal_received', 'run_cancelled']);
    expect(fold(cancelled).status).toBe('cancelled');
  });
});
