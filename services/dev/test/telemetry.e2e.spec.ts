// Issue acceptance: a run's trace, exported over OTLP by three separate service processes, is one trace
// whose parent links follow the run's causal chain, also across a planner killed with SIGKILL mid-run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { SUBJECTS, type RunEvent } from '@dura/contracts';
import { createEventStore } from '@dura/event-store';
import {
  startOtlpReceiver,
  useTestInfra,
  type ManagedProcess,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@dura/testing';
import { echoPlan, openSystem, startService, type SystemHandles } from './system';

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

/** The span itself, then its parent, and so on up to the root (as far as the receiver has them). */
function ancestry(span: ReceivedSpan, byId: Map<string, ReceivedSpan>): ReceivedSpan[] {
  const chain = [span];
  for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) chain.push(at);
  return chain;
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
