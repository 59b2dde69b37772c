// `dura replay`, `dura fork` and `dura diff` as real child processes, against planner, tool-gateway and
// projector running as separate processes.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { logOf, useCrashSystem, watchToEnd, type CrashSystem, type PlanRequest } from './crash-harness';
import { DIVERGES_AT_STEP } from './fixtures/diverging-model';
import { createDuraClient } from '@dura/client';
import { dura, eventually, getJson } from './system';
import { untilLogged } from './agent-support';
import { fakeModel, toolResults, useScriptedLlm, writeAgentsFile, type WireBody } from './scripted-llm';

const DIVERGING_MODEL = fileURLToPath(new URL('./fixtures/diverging-model.ts', import.meta.url));

// Registered before the system, so the fake model is up when the planner is started with agents.
const fake = useScriptedLlm();
const crash = useCrashSystem(['tool-gateway', 'projector', 'planner']);

/** Echo steps: their results are their arguments, so a run and its fork end with the same output. */
function echoes(runId: string, amounts: number[]): PlanRequest {
  return {
    runId,
    agent: { kind: 'scripted', steps: amounts.map((amount) => ({ tool: 'echo', args: { amount } })) },
  };
}

async function completed(sys: CrashSystem, request: PlanRequest): Promise<RunEvent[]> {
  await sys.submit(request);
  const log = await watchToEnd(sys, request.runId);
  expect(log.at(-1)?.type).toBe('run_completed');
  await eventually(
    async () => {
      const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${request.runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === log.at(-1)!.seq ? true : undefined;
    },
    `the projection of ${request.runId}`,
    30_000,
  );
  return log;
}

/** The JSON document a --json command printed (its last `{` … `}` block on stdout). */
function jsonOf(output: string): Record<string, unknown> {
  const start = output.indexOf('{');
  return JSON.parse(output.slice(start, output.lastIndexOf('}') + 1)) as Record<string, unknown>;
}

describe('dura replay', () => {
  it('reports no divergence for an unchanged run, with the number of events checked, and exits 0', async () => {
    const sys = crash();
    const log = await completed(sys, echoes('cli-replay-1', [100, 200, 300, 400]));
    const plain = await dura(sys, ['replay', 'cli-replay-1']);
    expect(plain.output).toContain(`no divergence (${log.length} events checked)`);
    expect(plain.code).toBe(0);
    const checked = await dura(sys, ['replay', 'cli-replay-1', '--projection', '--json']);
    expect(jsonOf(checked.output)).toEqual({
      runId: 'cli-replay-1',
      ok: true,
      checked: log.length,
      decisions: 1 + 4 * 2 + 2,
    });
    expect(checked.code).toBe(0);
  });

  it('with --model whose model changes at step 3, points at that exact thought and exits 1', async () => {
    const sys = crash();
    const log = await completed(sys, echoes('cli-replay-2', [100, 200, 300, 400, 500]));
    const thought = log.find((e) => e.type === 'thought' && e.data.step === DIVERGES_AT_STEP - 1)!;
    const result = await dura(sys, ['replay', 'cli-replay-2', '--model', DIVERGING_MODEL]);
    expect(result.output).toContain(
      `divergence at seq ${thought.seq}: the recorded thought differs from what the planner decides now at data.decision.calls[0].args.amount`,
    );
    expect(result.output).toMatch(/\n {2}now: +\{"type":"thought".*"amount":301/);
    expect(result.output).toMatch(/\n {2}recorded: \{"type":"thought".*"amount":300/);
    expect(result.code).toBe(1);
    const json = await dura(sys, ['replay', 'cli-replay-2', '--model', DIVERGING_MODEL, '--json']);
    expect(jsonOf(json.output)).toMatchObject({ ok: false, seq: thought.seq, checked: log.indexOf(thought) });
    expect(json.code).toBe(1);
  });

  it('exits 3 for a run with no events, and 2 for a --model module without createModel', async () => {
    const sys = crash();
    const missing = await dura(sys, ['replay', 'no-such-run']);
    expect(missing.code).toBe(3);
    expect(missing.output).toContain('run no-such-run has no events');
    await completed(sys, echoes('cli-replay-3', [100]));
    const noModel = fileURLToPath(new URL('./fixtures/witness-tools.ts', import.meta.url));
    const badModule = await dura(sys, ['replay', 'cli-replay-3', '--model', noModel]);
    expect(badModule.output).toContain('exports no createModel()');
    expect(badModule.code).toBe(2);
  });
});

describe('dura fork and dura diff', () => {
  it('fork --follow completes a fork of a run; diff finds no divergence; replay of the fork finds none either', async () => {
    const sys = crash();
    const log = await completed(sys, echoes('cli-fork-src', [100, 200, 300, 400]));
    const at = log.find((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-2')!.seq;
    const forked = await dura(sys, [
      'fork',
      'cli-fork-src',
      '--at',
      String(at),
      '--run-id',
      'cli-fork-new',
      '--follow',
    ]);
    expect(forked.output).toContain(`forked cli-fork-src at seq ${at} into cli-fork-new`);
    expect(forked.output).toMatch(/^run cli-fork-new completed$/m);
    expect(forked.code).toBe(0);
    const forkLog = await logOf(sys, 'cli-fork-new');
    expect(forkLog[0]).toMatchObject({ data: { forkOf: { runId: 'cli-fork-src', atSeq: at } } });

    const same = await dura(sys, ['diff', 'cli-fork-src', 'cli-fork-new']);
    expect(same.output).toContain('no divergence: cli-fork-src and cli-fork-new decided the same');
    expect(same.code).toBe(0);
    const replayed = await dura(sys, ['replay', 'cli-fork-new']);
    expect(replayed.output).toContain(`no divergence (${forkLog.length} events checked)`);
    expect(replayed.code).toBe(0);
  });

  it('diff shows the first step where two runs decided differently and exits 1', async () => {
    const sys = crash();
    const a = await completed(sys, echoes('cli-diff-a', [100, 200, 300]));
    const b = await completed(sys, echoes('cli-diff-b', [100, 250, 300]));
    const thoughtA = a.find((e) => e.type === 'thought' && e.data.step === 1)!;
    const thoughtB = b.find((e) => e.type === 'thought' && e.data.step === 1)!;
    const result = await dura(sys, ['diff', 'cli-diff-a', 'cli-diff-b']);
    expect(result.output).toContain('diverged at step 2:');
    expect(result.output).toContain(
      `a  cli-diff-a: seq ${thoughtA.seq} thought: tool_calls echo {"amount":200}`,
    );
    expect(result.output).toContain(
      `b  cli-diff-b: seq ${thoughtB.seq} thought: tool_calls echo {"amount":250}`,
    );
    expect(result.code).toBe(1);
    const json = await dura(sys, ['diff', 'cli-diff-a', 'cli-diff-b', '--json']);
    expect(jsonOf(json.output)).toEqual({
      a: 'cli-diff-a',
      b: 'cli-diff-b',
      divergence: {
        step: 2,
        a: { seq: thoughtA.seq, type: 'thought', summary: 'tool_calls echo {"amount":200}' },
        b: { seq: thoughtB.seq, type: 'thought', summary: 'tool_calls echo {"amount":250}' },
      },
    });
  });

  it('fork refuses a seq that is not an event of the source (exit 3), before sending anything', async () => {
    const sys = crash();
    const log = await completed(sys, echoes('cli-fork-bad', [100]));
    const result = await dura(sys, ['fork', 'cli-fork-bad', '--at', String(log.at(-1)!.seq + 1000)]);
    expect(result.output).toContain(`run cli-fork-bad has no event at seq ${log.at(-1)!.seq + 1000}`);
    expect(result.code).toBe(3);
  });
});

/** Agents of every kind: a JSON agent with a scripted model, and an LLM agent answered by the fake model. */
function agentsFile(url: string, secondTool: string) {
  return {
    agents: [
      {
        name: 'stepper',
        version: '1',
        tools: ['echo', 'pay.charge'],
        budget: { maxSteps: 10 },
        model: {
          provider: 'scripted',
          steps: [
            { tool: 'echo', args: { amount: 100 } },
            { tool: secondTool, args: { amount: 200 } },
          ],
        },
      },
      {
        name: 'talker',
        version: '1',
        systemPrompt: 'Echo the amount you are given, then say done.',
        tools: ['echo'],
        budget: { maxCostUsd: 5 },
        model: fakeModel(url),
      },
    ],
    prices: { 'fake-1': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  };
}

describe('dura replay of agent runs', () => {
  it('finds no divergence in runs of a JSON agent (scripted model) and an LLM agent (fake provider), with or without --agents', async () => {
    const sys = crash();
    const llm = fake.llm();
    const agents = await writeAgentsFile(fake.dir(), 'replay-agents', agentsFile(llm.url, 'echo'));
    await sys.restart('planner', undefined, { DURA_AGENTS: agents });
    const input = 'Echo 7, then say done.';
    llm.script(input, (body: WireBody) =>
      toolResults(body).length > 0
        ? { kind: 'message', content: 'done', usage: { inputTokens: 30, outputTokens: 2 } }
        : {
            kind: 'message',
            content: 'Echoing.',
            toolCalls: [{ name: 'echo', arguments: { amount: 7 } }],
            usage: { inputTokens: 20, outputTokens: 4 },
          },
    );
    const requests = [
      { runId: 'cli-replay-json-agent', agent: { kind: 'agent', name: 'stepper' } },
      { runId: 'cli-replay-llm-agent', agent: { kind: 'agent', name: 'talker' }, input },
    ] as unknown as PlanRequest[];
    for (const request of requests) {
      const log = await completed(sys, request);
      const started = log.find((e) => e.type === 'run_started')!;
      expect(started.data).toHaveProperty('pinned.version', '1');
      for (const flags of [[], ['--agents', agents]]) {
        const result = await dura(sys, ['replay', request.runId, ...flags]);
        expect(result.output, `dura replay ${request.runId} ${flags.join(' ')}`).toContain(
          `no divergence (${log.length} events checked)`,
        );
        expect(result.code).toBe(0);
      }
    }
    expect(llm.requestsFor(input)).toHaveLength(2);
  });

  it('with --agents whose agent asks for another tool at a recorded step, names that call and exits 1', async () => {
    const sys = crash();
    const llm = fake.llm();
    const agents = await writeAgentsFile(fake.dir(), 'replay-agents-v1', agentsFile(llm.url, 'echo'));
    const changed = await writeAgentsFile(fake.dir(), 'replay-agents-v2', agentsFile(llm.url, 'pay.charge'));
    await sys.restart('planner', undefined, { DURA_AGENTS: agents });
    const request = { runId: 'cli-replay-changed', agent: { kind: 'agent', name: 'stepper' } };
    const log = await completed(sys, request as unknown as PlanRequest);
    const second = log.filter((e) => e.type === 'thought')[1]!;
    const result = await dura(sys, ['replay', request.runId, '--agents', changed]);
    expect(result.output).toContain(
      `divergence at seq ${second.seq}: the recorded thought differs from what the planner decides now at data.decision.calls[0].tool`,
    );
    expect(result.output).toMatch(/\n {2}now: +\{"type":"thought".*"tool":"pay.charge"/);
    expect(result.output).toMatch(/\n {2}recorded: \{"type":"thought".*"tool":"echo"/);
    expect(result.code).toBe(1);
  });
});

describe('dura replay of runs that wait, sleep, fan out and start children', () => {
  it('finds no divergence in a scripted plan (signal, sleep, child run) and a JSON agent fanning out in parallel', async () => {
    const sys = crash();
    const agents = await writeAgentsFile(fake.dir(), 'replay-agents-parallel', {
      agents: [
        {
          name: 'fanner',
          version: '1',
          tools: ['echo'],
          model: {
            provider: 'scripted',
            steps: [
              {
                parallel: [
                  { tool: 'echo', args: { amount: 1 } },
                  { tool: 'echo', args: { amount: 2 } },
                ],
              },
              { tool: 'echo', args: { amount: 3 } },
            ],
          },
        },
      ],
    });
    await sys.restart('planner', undefined, { DURA_AGENTS: agents });
    const plan = {
      runId: 'cli-replay-waits',
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'echo', args: { amount: 10 } },
          { tool: 'dura.wait_for_signal', args: { name: 'go', timeoutSeconds: 600 } },
          { tool: 'dura.sleep', args: { seconds: 1 } },
          {
            tool: 'dura.run_agent',
            args: { agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { amount: 20 } }] } },
          },
        ],
      },
    } as unknown as PlanRequest;
    await sys.submit(plan);
    await untilLogged(sys, plan.runId, (e) => e.type === 'wait_requested' && e.data.kind === 'signal', 'go');
    await createDuraClient(sys.system).signal(plan.runId, 'go', { signalId: 'cli-replay-waits-go' });
    const log = await watchToEnd(sys, plan.runId, 120_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    const kinds = log.flatMap((e) => (e.type === 'wait_requested' ? [e.data.kind] : []));
    expect(kinds).toEqual(['signal', 'timer', 'child']);
    const child = log.find((e) => e.type === 'child_run_requested');
    const childRunId = child?.type === 'child_run_requested' ? child.data.childRunId : '';
    const fanned = await completed(sys, {
      runId: 'cli-replay-parallel',
      agent: { kind: 'agent', name: 'fanner' },
    } as unknown as PlanRequest);
    const first = fanned.find((e) => e.type === 'thought');
    expect(
      first?.type === 'thought' && first.data.decision.kind === 'tool_calls' ? first.data.decision.calls : [],
    ).toHaveLength(2);

    for (const [runId, flags] of [
      [plan.runId, []],
      [childRunId, []],
      ['cli-replay-parallel', []],
      ['cli-replay-parallel', ['--agents', agents]],
    ] as const) {
      const events = await logOf(sys, runId);
      const result = await dura(sys, ['replay', runId, ...flags]);
      expect(result.output, `dura replay ${runId} ${flags.join(' ')}`).toContain(
        `no divergence (${events.length} events checked)`,
      );
      expect(result.code).toBe(0);
    }
  });
});
