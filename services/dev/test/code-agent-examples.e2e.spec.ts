// The code-agent examples (examples/code-agents) on the real stack: planner, gateway and projector as their
// own processes on real NATS and Postgres, loading the examples module (DURA_AGENTS) and its tools
// (DURA_TOOLS_MODULES). The research agent asks a fake OpenAI-compatible model (real HTTP) and loops with
// its bound; the approval flow is approved and rejected with `dura approve`/`dura reject`, and refuses any
// other answer sent over HTTP ({}, null, "yes", {"approved":"true"}); the orchestrator's children all start in
// one decision and all complete; and the research agent and the orchestrator run as documented on
// `npm run dev`.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { childRunIdFor, fold } from '@dura/core';
import { useFakeLlmServer, type FakeLlmReply } from '@dura/testing';
import { logOf, useCrashSystem, watchToEnd, WITNESS_TOOLS, type CrashSystem } from './crash-harness';
import { count, ledgerOf, untilLogged, type WireBody } from './agent-support';
import { devOnce, dura, eventually, getJson } from './system';
import { EXAMPLE_TOOLS, RESEARCH_QUESTION as QUESTION, expectResearchRunsOnDev } from './examples-support';

const EXAMPLES = fileURLToPath(new URL('../../../examples/code-agents/index.ts', import.meta.url));

/**
 * The research agent's model: plans two searches; in round 1 judges the notes short and asks one follow-up;
 * in round 2 answers. Any other request is refused, so a changed prompt shows up as a failed run.
 */
function research(body: WireBody): FakeLlmReply {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const prompt = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  if (system.startsWith('You plan research') && prompt === QUESTION)
    return { kind: 'message', content: '{"queries": ["durable execution", "idempotency keys"]}' };
  if (system.startsWith('You judge') && prompt.includes('Round: 1'))
    return { kind: 'message', content: '{"done": false, "followUps": ["outbox pattern"]}' };
  if (system.startsWith('You judge') && prompt.includes('Round: 2'))
    return {
      kind: 'message',
      content: 'Here: {"done": true, "answer": "Record each step; key each effect; commit with an outbox."}',
    };
  return { kind: 'status', status: 400, body: { error: { message: `unexpected request: ${prompt}` } } };
}

const model = useFakeLlmServer({ provider: 'openai', respond: ({ body }) => research(body as WireBody) });

// Registered after the fake model's beforeAll, so its URL exists when the planner starts.
const crash = useCrashSystem(['planner', 'tool-gateway', 'projector'], {
  env: (name): Record<string, string> => ({
    DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${EXAMPLE_TOOLS}`,
    ...(name === 'planner' ? { DURA_AGENTS: EXAMPLES, RESEARCH_MODEL_URL: model().url } : {}),
  }),
});

/** The research agent's model requests, by their system prompt's first words. */
const modelAsked = (since: number) =>
  model()
    .requests.slice(since)
    .map((r) => ((r.body as WireBody).messages[0]?.content ?? '').split(' ').slice(0, 2).join(' '));

const isApprovalWait = (e: RunEvent) =>
  e.type === 'wait_requested' && e.data.kind === 'signal' && e.data.signal === 'deploy';

const intentsOf = (log: readonly RunEvent[]) =>
  log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.tool] : []));

/** The projector's view of the run once it caught up with the log: equal to the fold. */
async function expectProjected(sys: CrashSystem, runId: string, log: readonly RunEvent[]): Promise<void> {
  const state = fold(log);
  const projected = await eventually(
    async () => {
      const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === state.lastSeq ? body : undefined;
    },
    `the projection of ${runId} to reach seq ${state.lastSeq}`,
    60_000,
  );
  expect(projected).toEqual(JSON.parse(JSON.stringify(state)));
}

describe('the research example (researcher)', () => {
  it('plans with the model, searches in parallel, judges, follows up once and answers in round 2', async () => {
    const sys = crash();
    const runId = 'example-research';
    const since = model().requests.length;
    await sys.submit({
      runId,
      agent: { kind: 'agent', name: 'researcher' },
      input: { question: QUESTION, maxRounds: 3 },
    });
    const log = await watchToEnd(sys, runId, 180_000);
    expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_completed');
    expect(fold(log).output).toEqual({
      question: QUESTION,
      answer: 'Record each step; key each effect; commit with an outbox.',
      rounds: 2,
      complete: true,
      sources: ['n2', 'n3', 'n5'],
    });
    // The two planned searches are one decision (parallel intents); the follow-up is the next one.
    const decisions = log.flatMap((e) =>
      e.type === 'thought' && e.data.decision.kind === 'tool_calls'
        ? [e.data.decision.calls.map((c) => c.args['query'])]
        : [],
    );
    expect(decisions).toEqual([['durable execution', 'idempotency keys'], ['outbox pattern']]);
    // Three model calls, each asked once, recorded with the usage the model reported.
    expect(modelAsked(since)).toEqual(['You plan', 'You judge', 'You judge']);
    expect(fold(log).usage.inputTokens).toBeGreaterThan(0);
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).toEqual([
      'research.search',
      'research.search',
      'research.search',
    ]);
    await expectProjected(sys, runId, log);
  });

  it('runs as documented on `npm run dev -- --once --run examples/code-agents/research.json`', async () => {
    await expectResearchRunsOnDev('code-agents', model().url);
  }, 180_000);
});

describe('the approval flow example (approved-release)', () => {
  it('builds and tests, waits for the deploy verdict, and deploys once approved', async () => {
    const sys = crash();
    const runId = 'example-approval-yes';
    const input = { service: 'checkout', commit: '9f2c1e7a4b' };
    await sys.submit({ runId, agent: { kind: 'agent', name: 'approved-release' }, input });
    const waiting = await untilLogged(sys, runId, isApprovalWait, 'the deploy approval wait', 90_000);
    // Nothing is deployed before the verdict.
    expect(intentsOf(waiting)).toEqual(['demo.build', 'demo.test', 'dura.wait_for_signal']);
    expect(fold(waiting).status).toBe('waiting');
    // `dura get` names what answers the wait, and `dura approve` sends the wait's own signal with the
    // payload that approves.
    const advice = await dura(sys, ['get', runId]);
    expect(advice.output).toContain(`dura approve ${runId} --call call-3`);
    expect(advice.output).not.toContain("--payload '{}'");
    const approved = await dura(sys, ['approve', runId]);
    expect(approved.output).toContain(`sent deploy {"approved":true} to ${runId}`);
    expect(approved.code).toBe(0);
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(intentsOf(log)).toEqual([
      'demo.build',
      'demo.test',
      'dura.wait_for_signal',
      'demo.deploy',
      'demo.notify',
    ]);
    const output = fold(log).output as { imageTag: string; deployed: boolean; deploymentId: string };
    expect(output).toMatchObject({ imageTag: 'checkout:9f2c1e7', deployed: true });
    expect(output.deploymentId).toMatch(/^dep-[0-9a-f]{12}$/);
    const ledger = await ledgerOf(sys, runId);
    expect(ledger.map((row) => row.tool)).toEqual(['demo.build', 'demo.test', 'demo.deploy', 'demo.notify']);
    await expectProjected(sys, runId, log);
  });

  it('deploys nothing when the verdict is a rejection, and says why', async () => {
    const sys = crash();
    const runId = 'example-approval-no';
    const input = { service: 'search', commit: '7c1d2e3f00' };
    await sys.submit({ runId, agent: { kind: 'agent', name: 'approved-release' }, input });
    await untilLogged(sys, runId, isApprovalWait, 'the deploy approval wait', 90_000);
    const rejected = await dura(sys, ['reject', runId, '--reason', 'release freeze']);
    expect(rejected.output).toContain(`sent deploy {"approved":false,"reason":"release freeze"} to ${runId}`);
    expect(rejected.code).toBe(0);
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(intentsOf(log)).toEqual(['demo.build', 'demo.test', 'dura.wait_for_signal', 'demo.notify']);
    expect(fold(log).output).toEqual({
      imageTag: 'search:7c1d2e3',
      deployed: false,
      reason: 'release freeze',
    });
    const notified = log.find((e) => e.type === 'tool_call_requested' && e.data.tool === 'demo.notify');
    expect(notified?.type === 'tool_call_requested' ? notified.data.args : {}).toMatchObject({
      message: 'search:7c1d2e3 was not deployed: release freeze',
    });
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).not.toContain('demo.deploy');
    // A run that waits for no approval any more: nothing is sent, exit 3 with what the run is.
    const late = await dura(sys, ['approve', runId]);
    expect(late.output).toContain(`run ${runId} is completed: it waits for no approval`);
    expect(late.code).toBe(3);
  });

  it('refuses every answer but {"approved": true} sent over HTTP, naming what arrived; nothing is deployed', async () => {
    const sys = crash();
    const answers: [string, unknown][] = [
      ['empty', {}],
      ['null', null],
      ['yes', 'yes'],
      ['string', { approved: 'true' }],
    ];
    const runIds = answers.map(([name]) => `example-verdict-${name}`);
    await Promise.all(
      runIds.map((runId, i) =>
        sys.submit({
          runId,
          agent: { kind: 'agent', name: 'approved-release' },
          input: { service: `svc${i}`, commit: '0123456789' },
        }),
      ),
    );
    await Promise.all(
      runIds.map((runId) => untilLogged(sys, runId, isApprovalWait, `the deploy wait of ${runId}`, 90_000)),
    );
    for (const [i, [, payload]] of answers.entries()) {
      const response = await fetch(`${sys.system.apiUrl}/runs/${runIds[i]}/signals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'deploy', payload }),
      });
      expect(response.status, await response.text()).toBe(202);
    }
    for (const [i, [, payload]] of answers.entries()) {
      const runId = runIds[i]!;
      const log = await watchToEnd(sys, runId, 120_000);
      expect(log.at(-1)?.type).toBe('run_completed');
      expect(fold(log).output).toMatchObject({
        deployed: false,
        reason: `approval signal 'deploy' carried ${JSON.stringify(payload)} — only {"approved": true} approves`,
      });
      expect((await ledgerOf(sys, runId)).map((row) => row.tool)).not.toContain('demo.deploy');
    }
  });
});

describe('the orchestrator example (release-check)', () => {
  it('starts a child run per service in one decision, waits for all, and completes with each one', async () => {
    const sys = crash();
    const runId = 'example-orchestrator';
    const services = ['cart', 'search', 'checkout'];
    await sys.submit({
      runId,
      agent: { kind: 'agent', name: 'release-check' },
      input: { commit: '9f2c1e7a4b', services },
    });
    const log = await watchToEnd(sys, runId, 180_000);
    expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_completed');

    // One thought asked for the three children; all three were requested before any reported back.
    const thoughts = log.flatMap((e) => (e.type === 'thought' ? [e.data.decision] : []));
    const fanOut = thoughts[0];
    expect(fanOut?.kind === 'tool_calls' ? fanOut.calls.map((c) => c.tool) : []).toEqual([
      'dura.run_agent',
      'dura.run_agent',
      'dura.run_agent',
    ]);
    const children = log.flatMap((e) => (e.type === 'child_run_requested' ? [e.data.childRunId] : []));
    expect(children).toEqual([1, 2, 3].map((step) => childRunIdFor(runId, step)));
    const lastRequested = log.findLastIndex((e) => e.type === 'child_run_requested');
    const firstReport = log.findIndex((e) => e.type === 'child_run_completed');
    expect(lastRequested).toBeLessThan(firstReport);
    expect(count(log, 'child_run_completed')).toBe(3);

    // Each child ran its own build and test and completed.
    for (const [i, childRunId] of children.entries()) {
      const childLog = await watchToEnd(sys, childRunId, 60_000);
      expect(childLog.at(-1)?.type).toBe('run_completed');
      expect(intentsOf(childLog)).toEqual(['demo.build', 'demo.test']);
      expect(fold(childLog).output).toMatchObject({
        service: services[i],
        imageTag: `${services[i]}:9f2c1e7`,
        passed: true,
      });
    }
    const output = fold(log).output as { ready: string[]; outcomes: { service: string; ok: boolean }[] };
    expect(output.ready).toEqual(services);
    expect(output.outcomes.map((o) => [o.service, o.ok])).toEqual(services.map((s) => [s, true]));
    expect(intentsOf(log)).toEqual(['dura.run_agent', 'dura.run_agent', 'dura.run_agent', 'demo.notify']);
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).toEqual(['demo.notify']);
    await expectProjected(sys, runId, await logOf(sys, runId));
  });

  it('runs as documented on `npm run dev -- --once --run examples/code-agents/release-check.json`', async () => {
    const { code, output } = await devOnce('examples/code-agents/release-check.json', {
      DURA_AGENTS: 'examples/code-agents/index.ts',
      DURA_TOOLS_MODULES: 'examples/code-agents/tools.ts',
    });
    expect(code, output).toBe(0);
    expect(output.match(/child_run_completed/g)).toHaveLength(3);
    expect(output).toMatch(
      /run_completed +output \{"commit":"9f2c1e7a4b","ready":\["cart","search","checkout"\]/,
    );
  }, 180_000);
});
