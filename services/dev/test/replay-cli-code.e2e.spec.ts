// `dura replay` of code agents' runs, as a real child process, against planner, tool-gateway and projector
// processes on real NATS and Postgres. The planner serves fixtures/replay-code-agents.ts (DURA_AGENTS); a
// run uses every primitive with a record (ctx.now/random/uuid, tools, a fan-out, a signal, a sleep, a child
// run). Replayed with the same module: no divergence. With a changed module: the first divergent call,
// named. Without the module: refused, since nothing of the code could be checked. A run of replay-quoter asks
// a fake OpenAI-compatible server through ctx.model under a metered budget: replay re-derives its
// reservations and answers its calls from the log, asking no model.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { decodeJournal } from '@dura/code-agents/engine';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { startFakeLlmServer, type FakeLlmServer } from '@dura/testing';
import { useCrashSystem, watchToEnd, WITNESS_TOOLS, type CrashSystem } from './crash-harness';
import { count, untilLogged, witnessedKeys, type WireBody } from './agent-support';
import { dura, untilProjected } from './system';

const AGENTS = fileURLToPath(new URL('./fixtures/replay-code-agents.ts', import.meta.url));
const CHANGED = fileURLToPath(new URL('./fixtures/replay-code-agents-changed.ts', import.meta.url));
/** Code agents, but not replay-checkout: a module that cannot replay its runs. */
const OTHER = fileURLToPath(new URL('./fixtures/code-agents.ts', import.meta.url));

let llm: FakeLlmServer | undefined;
const lastUser = (body: WireBody) => body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';

// Started before the system, so the planner is given its URL.
beforeAll(async () => {
  llm = await startFakeLlmServer({
    provider: 'openai',
    respond: ({ body }) => {
      const prompt = lastUser(body as WireBody);
      const usage = { inputTokens: 30, outputTokens: 10 };
      if (prompt.startsWith('plan ')) return { kind: 'message', content: '7,8', usage };
      if (prompt.startsWith('loop ')) {
        const answered = (body as WireBody).messages.some((m) => m.role === 'tool');
        if (!answered)
          return { kind: 'message', toolCalls: [{ name: 'pay__checked', arguments: { amount: 3 } }], usage };
        return { kind: 'message', content: 'checked 3', usage };
      }
      return { kind: 'message', content: `${prompt.split(' ')[0] ?? ''}: fine`, usage };
    },
  });
});
afterAll(async () => {
  await llm?.close();
});

const crash = useCrashSystem(['tool-gateway', 'projector', 'planner'], {
  env: (name): Record<string, string> =>
    name === 'planner' ? { DURA_AGENTS: AGENTS, REPLAY_MODEL_URL: llm?.url ?? '' } : {},
});

/** The JSON document a --json command printed (its last `{` … `}` block). */
function jsonOf(output: string): Record<string, unknown> {
  const start = output.indexOf('{');
  return JSON.parse(output.slice(start, output.lastIndexOf('}') + 1)) as Record<string, unknown>;
}

/** Runs replay-checkout to its end: it waits for `go` half-way, which the test sends. */
async function checkoutRun(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  await sys.submit({ runId, agent: { kind: 'agent', name: 'replay-checkout' }, input: null });
  await untilLogged(
    sys,
    runId,
    (e) => e.type === 'wait_requested' && e.data.kind === 'signal',
    'the go wait',
  );
  await createDuraClient(sys.system).signal(runId, 'go', { signalId: `${runId}-go`, payload: { ok: true } });
  const log = await watchToEnd(sys, runId, 120_000);
  expect(log.at(-1)?.type).toBe('run_completed');
  await untilProjected(sys.system.apiUrl, runId, log.at(-1)!.seq);
  return log;
}

describe('dura replay of a code agent run', () => {
  it('re-runs the code with --agents: no divergence for the run and its child; without the module, refused', async () => {
    const sys = crash();
    const runId = 'replay-code-1';
    const log = await checkoutRun(sys, runId);
    // The run used what replay must re-derive: pinned code, recorded values, a fan-out, a wait, a sleep, a child.
    expect(log.find((e) => e.type === 'run_started')?.data).toMatchObject({
      pinned: { agent: 'replay-checkout', version: '1', provider: 'code' },
    });
    const thoughts = log.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    expect(thoughts[0]?.content).toMatch(/"k":"now".*"k":"uuid".*"k":"random"/);
    const kinds = log.flatMap((e) => (e.type === 'wait_requested' ? [e.data.kind] : []));
    expect(kinds).toEqual(['signal', 'timer', 'child']);
    expect(thoughts.map((t) => (t.decision.kind === 'tool_calls' ? t.decision.calls.length : 0))).toEqual([
      1, 1, 2, 1, 1, 1, 0,
    ]);
    const output = fold(log).output as { ref: string; child: unknown };
    expect(output.child).toMatchObject({ charged: { amount: 5 } });
    // The four pay calls of the parent each reached the payment witness once.
    const keys = witnessedKeys(sys, runId);
    expect(keys).toHaveLength(4);
    expect(new Set(keys).size).toBe(4);

    const same = await dura(sys, ['replay', runId, '--agents', AGENTS]);
    expect(same.output).toContain(`no divergence (${log.length} events checked)`);
    expect(same.code).toBe(0);
    const json = await dura(sys, ['replay', runId, '--agents', AGENTS, '--projection', '--json']);
    expect(jsonOf(json.output)).toMatchObject({ runId, ok: true, checked: log.length });
    expect(json.code).toBe(0);

    const childId = log.find((e) => e.type === 'child_run_requested')!;
    const childRunId = childId.type === 'child_run_requested' ? childId.data.childRunId : '';
    const childLog = await watchToEnd(sys, childRunId);
    const child = await dura(sys, ['replay', childRunId, '--agents', AGENTS]);
    expect(child.output).toContain(`no divergence (${childLog.length} events checked)`);
    expect(child.code).toBe(0);

    // Without the code, nothing of its decisions can be checked: refused, with what to pass.
    const bare = await dura(sys, ['replay', runId]);
    expect(bare.output).toContain(
      `run ${runId} ran code agent replay-checkout@1: its steps come from the agent's code`,
    );
    expect(bare.output).toContain(`dura replay ${runId} --agents <module>`);
    expect(bare.output).not.toContain('no divergence');
    expect(bare.code).toBe(2);
    const other = await dura(sys, ['replay', runId, '--agents', OTHER]);
    expect(other.output).toContain(`--agents ${OTHER} does not define replay-checkout@1`);
    expect(other.output).not.toContain('no divergence');
    expect(other.code).toBe(2);
  });

  it('with a changed module, names the step, the recorded call and what the code asks now, and exits 1', async () => {
    const sys = crash();
    const runId = 'replay-code-changed';
    const log = await checkoutRun(sys, runId);
    const second = log.filter((e) => e.type === 'thought')[1]!;
    const result = await dura(sys, ['replay', runId, '--agents', CHANGED]);
    expect(result.output).toContain(
      `divergence at seq ${second.seq}: step 2: recorded pay.charge {"amount":2}, the code now asks pay.checked {"amount":2}`,
    );
    expect(result.output).toMatch(/\n {2}now: +\{"type":"thought".*"tool":"pay.checked"/);
    expect(result.output).toMatch(/\n {2}recorded: \{"type":"thought".*"tool":"pay.charge"/);
    expect(result.code).toBe(1);
    const json = await dura(sys, ['replay', runId, '--agents', CHANGED, '--json']);
    expect(jsonOf(json.output)).toMatchObject({
      runId,
      ok: false,
      seq: second.seq,
      step: 2,
      checked: log.indexOf(second),
    });
    expect(json.code).toBe(1);
  });

  it('replays a run that asked the model under a metered budget: no divergence, no model asked', async () => {
    const sys = crash();
    const runId = 'replay-code-model';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'replay-quoter' }, input: 'echo' });
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(fold(log).output).toMatchObject({
      amounts: [7, 8],
      summary: 'summarize: fine',
      rating: 'rate: fine',
    });
    // Two steps asked the model (the plan; the summary and the rating at once), each after its reservation.
    const types = log.map((e) => e.type);
    expect(count(log, 'budget_reserved')).toBe(2);
    const thoughts = log.flatMap((e) => (e.type === 'thought' ? [e] : []));
    const answers = thoughts.map((t) => decodeJournal(t.data.content).filter((e) => e.k === 'model').length);
    expect(answers).toEqual([1, 2]);
    for (const thought of thoughts) {
      const before = types.lastIndexOf('budget_reserved', log.indexOf(thought));
      expect(before, `a reservation before the thought at seq ${thought.seq}`).toBeGreaterThan(-1);
      const reserved = log[before]!;
      expect(reserved.type === 'budget_reserved' && reserved.data.costUsd).toBeGreaterThan(0);
    }
    const asked = () => (llm?.requests ?? []).filter((r) => lastUser(r.body as WireBody).endsWith(' echo'));
    expect(asked()).toHaveLength(3);
    await untilProjected(sys.system.apiUrl, runId, log.at(-1)!.seq);

    const same = await dura(sys, ['replay', runId, '--agents', AGENTS, '--projection']);
    expect(same.output).toContain(`no divergence (${log.length} events checked)`);
    expect(same.code).toBe(0);
    // The plan asked in other words: named at the reservation made for it, the first event it touches.
    const changed = await dura(sys, ['replay', runId, '--agents', CHANGED, '--json']);
    const first = log.find((e) => e.type === 'budget_reserved')!;
    const divergence = jsonOf(changed.output);
    expect(divergence).toMatchObject({ runId, ok: false, seq: first.seq, step: 1 });
    expect(String(divergence['reason'])).toMatch(
      /^step 1: non-determinism at step 1 of replay-quoter@1 .*the log recorded ctx\.model \(request [0-9a-f]{12}\), the code now asks for ctx\.model \(request [0-9a-f]{12}\)/,
    );
    expect(changed.code).toBe(1);
    // Replay asked no model: the server saw only the run's own three calls.
    expect(asked()).toHaveLength(3);
  });

  it('replays a ctx.loop run with the tools the planner serves (--tools): no divergence, no model asked', async () => {
    const sys = crash();
    const runId = 'replay-code-loop';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'replay-looper' }, input: 'fox' });
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(fold(log).output).toEqual({ text: 'checked 3', turns: 2 });
    expect(witnessedKeys(sys, runId)).toHaveLength(1);
    const asked = () => (llm?.requests ?? []).filter((r) => lastUser(r.body as WireBody) === 'loop fox');
    expect(asked()).toHaveLength(2);

    const same = await dura(sys, ['replay', runId, '--agents', AGENTS, '--tools', WITNESS_TOOLS]);
    expect(same.output).toContain(`no divergence (${log.length} events checked)`);
    expect(same.code).toBe(0);
    // Without the tools, the loop's requests cannot offer pay.checked: replay says where, never "no divergence".
    const bare = await dura(sys, ['replay', runId, '--agents', AGENTS]);
    expect(bare.output).not.toContain('no divergence');
    expect(bare.code).toBe(1);
    // --tools without --agents is refused: a run keeps what its log recorded then, and nothing reads the tools.
    const alone = await dura(sys, ['replay', runId, '--tools', WITNESS_TOOLS]);
    expect(alone.output).toContain('--tools is read with --agents');
    expect(alone.code).toBe(2);
    expect(asked()).toHaveLength(2);
  });
});
