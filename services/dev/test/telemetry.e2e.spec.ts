// Issue acceptance: a run's trace, exported over OTLP by three separate service processes, is one trace
// whose parent links follow the run's causal chain, also across a planner killed with SIGKILL mid-run.
// Issue 31: a run resumed by a timer and by a signal is still one trace with one root, and a worker's
// drive, which makes several decisions in place, shows one `dura.decision` span per decision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { SIGNAL_VERSION, SUBJECTS, type RunEvent } from '@dura/contracts';
import { createEventStore } from '@dura/event-store';
import {
  eventually,
  freePort,
  startOtlpReceiver,
  useTestInfra,
  type ManagedProcess,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@dura/testing';
import { echoPlan, openSystem, startService, type SystemHandles } from './system';
import { ancestry, decisionsRecorded, describeTrace, traceIdIn } from './telemetry-support';

const infra = useTestInfra();
let system: SystemHandles;
let receiver: OtlpReceiver;
let env: Record<string, string>;
const processes: ManagedProcess[] = [];

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  receiver = await startOtlpReceiver();
  env = {
    ...system.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    // Export within 100 ms, so spans reach the receiver before a SIGKILL loses the batch.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    PLANNER_ACK_WAIT_MS: '2000',
    GATEWAY_ACK_WAIT_MS: '2000',
    // Calls go as tool tasks, followed through the gateway and the decide task back to the planner (the
    // durable way); 'a run whose calls go straight to a gateway' below follows direct calls.
    PLANNER_DIRECT_CALLS: 'false',
  };
  for (const name of ['tool-gateway', 'projector', 'planner'] as const)
    processes.push(await startService(name, env));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await receiver?.close();
  await system?.close();
});

async function runToEnd(runId: string): Promise<RunEvent[]> {
  const watched: RunEvent[] = [];
  for await (const event of createDuraClient(system).watchRun(runId)) watched.push(event);
  return watched;
}

/** The run's trace once it holds everything the test expects: spans of every event's projection included. */
async function traceOf(runId: string, events: number): Promise<ReceivedSpan[]> {
  // Found by the run id its spans carry: a killed process's last spans (the root among them) may be lost.
  const traceIdOf = (all: ReceivedSpan[]) => all.find((s) => s.attributes['dura.run.id'] === runId)?.traceId;
  const spans = await receiver.waitForSpans((all) => {
    const mine = all.filter((s) => s.traceId === traceIdOf(all));
    return (
      mine.filter((s) => s.name === 'dura.project').length >= events &&
      mine.filter((s) => s.name === 'dura.tool.call echo').length >= 3 &&
      mine.filter((s) => s.name === 'process dura.task.decide').length >= 3 &&
      mine.some((s) => s.name === 'dura.decision' && s.attributes['dura.run.step'] === 3)
    );
  }, 30_000);
  return spans.filter((s) => s.traceId === traceIdOf(spans));
}

describe('a run traced end to end with OTLP export on', () => {
  it('is one trace, with spans from every service whose parents follow the causal chain', async () => {
    const runId = 'traced-three-steps';
    await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan(runId, 3)), { msgID: runId });
    const events = await runToEnd(runId);
    expect(events.at(-1)?.type).toBe('run_completed');

    const trace = await traceOf(runId, events.length);
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    // Every span anywhere that names this run is in this one trace.
    const naming = receiver.spans().filter((span) => span.attributes['dura.run.id'] === runId);
    expect(new Set(naming.map((span) => span.traceId))).toEqual(new Set([trace[0]?.traceId]));
    expect(new Set(trace.map((span) => span.service))).toEqual(
      new Set(['planner', 'tool-gateway', 'projector']),
    );
    // Every event of the run appended in this trace, each carrying its context in meta.trace.
    const traceIds = new Set(events.map((event) => event.meta.trace?.split('-')[1]));
    expect(traceIds).toEqual(new Set([trace[0]?.traceId]));

    const named = (name: string, step?: number) =>
      trace.filter((s) => s.name === name && (step === undefined || s.attributes['dura.run.step'] === step));
    // The request came from a plain NATS client: the planner's intake opens the trace.
    const roots = trace.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => [s.service, s.name])).toEqual([['planner', 'process dura.submit']]);
    const [root] = named('dura.run');
    expect(root?.parentSpanId).toBe(roots[0]?.spanId);
    const intents = events.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
    for (const step of [1, 2, 3]) {
      // Decision (made at step - 1) → dispatch → gateway → tool call → relay → decide task → next decision.
      const [call] = named('dura.tool.call echo', step);
      expect(call, `tool call span of step ${step}`).toBeDefined();
      const callChain = ancestry(call as ReceivedSpan, byId);
      const decision = callChain.find((s) => s.name === 'dura.decision');
      expect(decision?.attributes['dura.run.step']).toBe(step - 1);
      expect(callChain).toContain(root);
      expect(callChain.map((s) => s.name)).toContain('publish dura.task.tool.{tool}');
      expect(call?.service).toBe('tool-gateway');
      expect(call?.attributes).toMatchObject({
        'dura.tool.name': 'echo',
        'dura.tool.idempotency_key': intents[step - 1]?.idempotencyKey,
        'dura.tool.attempt': 1,
        'dura.tool.deduped': false,
      });
      const [next] = named('dura.decision', step);
      const nextChain = ancestry(next as ReceivedSpan, byId);
      expect(nextChain).toContain(call);
      expect(nextChain.map((s) => s.name)).toEqual(
        expect.arrayContaining(['dura.outbox.relay', 'process dura.task.decide']),
      );
    }

    // The model call: a client span under its decision, with the model and its token usage.
    const chats = trace.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(4);
    for (const chat of chats) {
      expect(byId.get(chat.parentSpanId ?? '')?.name).toBe('dura.decision');
      expect(chat.kind).toBe('client');
      expect(chat.attributes['gen_ai.request.model']).toEqual(expect.any(String));
      expect(chat.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
      expect(chat.attributes['gen_ai.usage.output_tokens']).toEqual(expect.any(Number));
    }

    // Messaging spans follow the semantic conventions.
    const consumers = trace.filter((s) => s.name === 'process dura.task.decide');
    expect(consumers.length).toBeGreaterThanOrEqual(3);
    expect(consumers[0]?.attributes).toMatchObject({
      'messaging.system': 'nats',
      'messaging.destination.name': 'dura.task.decide',
      'messaging.operation.type': 'process',
      'messaging.consumer.group.name': 'planner-decide',
    });
    expect(consumers[0]?.attributes['messaging.message.id']).toMatch(new RegExp(`^${runId}@\\d+$`));

    // One projection span per event, each under the span that appended its event.
    const projections = named('dura.project');
    expect(projections.map((s) => s.attributes['dura.event.seq']).sort()).toEqual(
      events.map((e) => e.seq).sort(),
    );
    expect(projections.every((s) => s.service === 'projector' && byId.has(s.parentSpanId ?? ''))).toBe(true);
  });

  it('continues the same trace after the planner is SIGKILLed mid-run, with a span event marking the resume', async () => {
    const runId = 'traced-through-a-crash';
    const planner = processes.pop() as ManagedProcess;
    await planner.kill('SIGTERM');
    // Killed right after recording step 2's intent, before dispatching it.
    const doomed = await startService('planner', { ...env, DURA_FAILPOINT: 'planner.after-intent:2' });
    await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan(runId, 3)), { msgID: runId });
    const exit = await doomed.exited;
    expect(exit.signal).toBe('SIGKILL');
    processes.push(await startService('planner', env));

    const events = await runToEnd(runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const stored = await createEventStore(system).read(runId);
    expect(stored.filter((e) => e.type === 'tool_call_requested')).toHaveLength(3);

    const trace = await traceOf(runId, events.length);
    const naming = receiver.spans().filter((span) => span.attributes['dura.run.id'] === runId);
    expect(new Set(naming.map((span) => span.traceId))).toEqual(new Set([trace[0]?.traceId]));
    const resumed = trace.filter((span) => span.events.some((e) => e.name === 'dura.run.resumed'));
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(resumed[0]?.service).toBe('planner');
    const resumeEvent = resumed[0]?.events.find((e) => e.name === 'dura.run.resumed');
    expect(resumeEvent?.attributes['dura.run.id']).toBe(runId);
    // The restarted planner's work (step 2's dispatch, step 3's decision) hangs in the same trace.
    expect(trace.some((s) => s.name === 'dura.tool.call echo' && s.attributes['dura.run.step'] === 2)).toBe(
      true,
    );
    expect(new Set(events.map((event) => event.meta.trace?.split('-')[1]))).toEqual(
      new Set([trace[0]?.traceId]),
    );
  });
});

describe('a run resumed from outside', () => {
  it('by a timer and by a signal from a client in another trace: one trace, the run root its only root', async () => {
    const runId = 'traced-sleep-and-signal';
    const request = {
      v: 1,
      runId,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'dura.sleep', args: { seconds: 1 } },
          { tool: 'dura.wait_for_signal', args: { name: 'go' } },
          { tool: 'echo', args: { step: 3, approvedBy: '$steps.2.by' } },
        ],
      },
    };
    await system.js.publish(SUBJECTS.submit, JSON.stringify(request), { msgID: runId });
    const store = createEventStore(system);
    await eventually(async () => {
      const log = await store.read(runId);
      return log.some((e) => e.type === 'wait_requested' && e.data.kind === 'signal') || undefined;
    }, 'the run waits for the signal');
    // The client sends the signal from a trace of its own, unrelated to the run's.
    const clientTrace = '0af7651916cd43dd8448eb211c80319c';
    const headers = natsHeaders();
    headers.set('traceparent', `00-${clientTrace}-b7ad6b7169203331-01`);
    const signal = { v: SIGNAL_VERSION, runId, signalId: 'go-1', name: 'go', payload: { by: 'ops' } };
    await system.js.publish(SUBJECTS.signal, JSON.stringify(signal), {
      msgID: `signal:${runId}:go-1`,
      headers,
    });
    const events = await runToEnd(runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const runTrace = traceIdIn(events[0]);
    expect(new Set(events.map(traceIdIn)), 'every event of the run recorded in its trace').toEqual(
      new Set([runTrace]),
    );

    // Complete once every event is projected, the resumptions are in, and every span's parent is there.
    let trace: ReceivedSpan[] = [];
    await receiver
      .waitForSpans((all) => {
        trace = all.filter((s) => s.traceId === runTrace);
        const ids = new Set(trace.map((s) => s.spanId));
        return (
          trace.filter((s) => s.name === 'dura.project').length >= events.length &&
          trace.some((s) => s.name === 'process dura.signal') &&
          trace.some((s) => s.name === 'process dura.task.timer') &&
          trace.some((s) => s.name === 'dura.tool.call echo') &&
          trace.every((s) => !s.parentSpanId || ids.has(s.parentSpanId))
        );
      }, 30_000)
      .catch((err: unknown) => {
        throw new Error(`the run's trace is not whole: ${describeTrace(trace)}`, { cause: err });
      });
    const naming = receiver.spans().filter((span) => span.attributes['dura.run.id'] === runId);
    expect(new Set(naming.map((span) => span.traceId)), 'every span naming the run').toEqual(
      new Set([runTrace]),
    );
    const roots = trace.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => [s.service, s.name])).toEqual([['planner', 'process dura.submit']]);
    expect(receiver.spans().filter((s) => s.traceId === clientTrace)).toEqual([]);
    // The signal's handling continues the run's trace and links to the client's.
    const [handled] = trace.filter((s) => s.name === 'process dura.signal');
    expect(handled?.links.map((link) => link.traceId)).toEqual([clientTrace]);
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    expect(ancestry(handled as ReceivedSpan, byId).map((s) => s.name)).toContain('dura.decision');
    const projections = trace.filter((s) => s.name === 'dura.project');
    expect(projections.map((s) => s.attributes['dura.event.seq']).sort()).toEqual(
      events.map((e) => e.seq).sort(),
    );
  });
});

describe('a forked run', () => {
  it('is a trace of its own, its fork span linked to the source run at the fork point', async () => {
    const sourceRunId = 'traced-sleep-and-signal';
    const source = await createEventStore(system).read(sourceRunId);
    const at = source.find((e) => e.type === 'signal_received') as RunEvent;
    const client = createDuraClient(system);
    const { runId } = await client.forkRun({ sourceRunId, atSeq: at.seq, runId: 'traced-fork' });
    const events = await runToEnd(runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const forkTrace = traceIdIn(events[0]);
    expect(forkTrace).not.toBe(traceIdIn(at));
    expect(new Set(events.map(traceIdIn))).toEqual(new Set([forkTrace]));

    const spans = await receiver.waitForSpans(
      (all) =>
        all.filter((s) => s.traceId === forkTrace && s.name === 'dura.project').length >= events.length,
      30_000,
    );
    const [forked] = spans.filter((s) => s.name === 'dura.fork' && s.traceId === forkTrace);
    const [, sourceTrace, sourceSpan] = at.meta.trace?.split('-') ?? [];
    expect(forked?.links).toEqual([
      { traceId: sourceTrace, spanId: sourceSpan, attributes: { 'dura.fork.source_run_id': sourceRunId } },
    ]);
    const roots = spans.filter((s) => s.traceId === forkTrace && !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual(['process dura.fork']);
  });
});

describe('a run whose calls go straight to a gateway (direct calls)', () => {
  it('is one trace: each call under the decision that recorded it, through the planner’s request and the gateway’s answer', async () => {
    const runId = 'traced-direct-calls';
    const index = processes.findIndex((proc) => proc.name === 'planner');
    await processes.splice(index, 1)[0]?.kill('SIGTERM');
    processes.push(await startService('planner', { ...env, PLANNER_DIRECT_CALLS: 'true' }));
    await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan(runId, 3)), { msgID: runId });
    const events = await runToEnd(runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const runTrace = traceIdIn(events[0]);

    let trace: ReceivedSpan[] = [];
    await receiver
      .waitForSpans((all) => {
        trace = all.filter((s) => s.traceId === runTrace);
        return (
          trace.filter((s) => s.name === 'dura.project').length >= events.length &&
          trace.filter((s) => s.name === 'dura.tool.call echo').length >= 3 &&
          trace.some((s) => s.name === 'dura.decision' && s.attributes['dura.run.step'] === 3)
        );
      }, 30_000)
      .catch((err: unknown) => {
        throw new Error(`the run's trace is not whole: ${describeTrace(trace)}`, { cause: err });
      });
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    expect(trace.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual(['process dura.submit']);
    for (const step of [1, 2, 3]) {
      const call = trace.find((s) => s.name === 'dura.tool.call echo' && s.attributes['dura.run.step'] === step);
      expect(call?.service, `tool call span of step ${step}`).toBe('tool-gateway');
      const chain = ancestry(call as ReceivedSpan, byId);
      expect(chain.find((s) => s.name === 'dura.decision')?.attributes['dura.run.step']).toBe(step - 1);
      expect(chain.map((s) => [s.service, s.name])).toEqual(
        expect.arrayContaining([
          ['tool-gateway', 'process dura.call.{tool}'],
          ['planner', 'call dura.call.{tool}'],
        ]),
      );
    }
    // Neither a tool task nor a decide task: the drive went on from each answer.
    expect(trace.map((s) => s.name)).not.toContain('publish dura.task.tool.{tool}');
    expect(trace.map((s) => s.name)).not.toContain('process dura.task.decide');
  });
});

describe('a worker driving a run in place', () => {
  it('records one dura.decision span and one decision-histogram count per thought', async () => {
    const runId = 'traced-worker';
    // The worker alone plans and runs the calls: the planner and the gateway step aside.
    for (const name of ['planner', 'tool-gateway']) {
      const index = processes.findIndex((proc) => proc.name === name);
      await processes.splice(index, 1)[0]?.kill('SIGTERM');
    }
    const metricsPort = await freePort();
    processes.push(await startService('worker', { ...env, METRICS_PORT: String(metricsPort) }));
    await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan(runId, 4)), { msgID: runId });
    const events = await runToEnd(runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const thoughts = events.filter((e) => e.type === 'thought');
    expect(thoughts).toHaveLength(5);

    const decisions = (all: ReceivedSpan[]) =>
      all.filter((s) => s.name === 'dura.decision' && s.attributes['dura.run.id'] === runId);
    await receiver
      .waitForSpans((all) => decisions(all).length >= thoughts.length, 20_000)
      .catch((err: unknown) => {
        const got = decisions(receiver.spans()).map((s) => s.attributes['dura.run.step']);
        throw new Error(`${thoughts.length} decisions, dura.decision spans of steps [${got.join(', ')}]`, {
          cause: err,
        });
      });
    const spans = decisions(receiver.spans());
    expect(spans.map((s) => s.attributes['dura.run.step']).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdIn(events[0])]));
    // Each decision's model call hangs under its own decision.
    const byId = new Map(receiver.spans().map((span) => [span.spanId, span]));
    const chats = receiver
      .spans()
      .filter((s) => s.name.startsWith('chat ') && s.traceId === traceIdIn(events[0]));
    expect(
      new Set(chats.map((chat) => byId.get(chat.parentSpanId ?? '')?.attributes['dura.run.step'])),
    ).toEqual(new Set([0, 1, 2, 3, 4]));

    expect(await decisionsRecorded(`http://127.0.0.1:${metricsPort}/metrics`)).toBe(thoughts.length);
  });
});
