// The log of an agent run grows linearly with its conversation, not quadratically: each model call records
// only the messages that are new since the previous recorded input (chained by hash), so a conversation that
// grows by one tool result per decision adds about one result's worth of bytes per decision to the stream.
// The planner runs in-process on a real nats-server with a fake OpenAI-compatible model; the test plays the
// tool gateway itself: it answers each tool task by appending `tool_call_completed` (msg-id
// `<idempotencyKey>:result`) and nudging the planner with a decide task (msg-id `<runId>@<afterSeq>`).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Subscription } from '@nats-io/nats-core';
import {
  newEvent,
  runSubject,
  RUN_REQUEST_VERSION,
  STREAMS,
  SUBJECTS,
  TASK_VERSION,
  toolTaskSubject,
  type DecideTask,
  type RunEvent,
  type ToolTask,
} from '@dura/contracts';
import { canonicalJson, fold } from '@dura/core';
import { useFakeLlmServer, useTestInfra } from '@dura/testing';
import { AgentRegistry, expandPrompt } from '@dura/agents';
import { eventually, storedMessages } from './support';
import { agentPlanner, usePlanner } from './planner-harness';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let gateway: Subscription | undefined;

/** Decisions each run asks for: `decisions - 1` tool calls, then the final answer. Keyed by the run's input. */
const plans = new Map<string, number>();
const RESULT_CHARS = 1_000;

/** About 1 KB of text no earlier result contains, so the conversation really grows by it each step. */
function resultText(runId: string, step: number): string {
  const seed = `${runId} step ${step}: `;
  let text = seed;
  for (let i = 0; text.length < RESULT_CHARS; i += 1) text += `${(step * 7919 + i * 104_729) % 1_000_003} `;
  return text.slice(0, RESULT_CHARS);
}

interface WireBody {
  messages: { role: string; content?: string }[];
}

/** The run's input: the first user message of a request the planner sent. */
function inputOf(body: unknown): string {
  return (body as WireBody).messages.find((m) => m.role === 'user')?.content ?? '';
}

const llm = useFakeLlmServer({
  provider: 'openai',
  respond: ({ body }) => {
    const decisions = plans.get(inputOf(body));
    if (decisions === undefined)
      return { kind: 'status', status: 400, body: { error: { message: 'no plan for this input' } } };
    const results = (body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
    if (results + 1 >= decisions) return { kind: 'message', content: `done after ${results} results` };
    return {
      kind: 'message',
      content: `reading part ${results + 1}`,
      toolCalls: [{ name: 'echo', arguments: { part: results + 1 } }],
      usage: { inputTokens: 100 + results * 250, outputTokens: 20 },
    };
  },
});
const env = usePlanner(infra, () =>
  agentPlanner(
    new AgentRegistry({
      agents: [
        {
          name: 'reader',
          version: '1',
          systemPrompt: 'You read a long document part by part.',
          model: { provider: 'openai', model: 'fake-1', baseUrl: llm().url, maxTokens: 100 },
          tools: ['echo'],
        },
      ],
    }),
  ),
);

beforeAll(() => {
  // The stand-in gateway: every tool task is answered with its result, as the real relay records it.
  gateway = env.setup.nc.subscribe(toolTaskSubject('echo'), {
    callback: (_err, msg) => {
      const task = msg.json<ToolTask>();
      void answer(task).catch((err: unknown) => {
        process.stderr.write(`answering ${task.idempotencyKey} failed: ${String(err)}\n`);
      });
    },
  });
});

afterAll(() => {
  gateway?.unsubscribe();
});

async function answer(task: ToolTask): Promise<void> {
  const event = newEvent(
    'tool_call_completed',
    {
      callId: task.callId,
      idempotencyKey: task.idempotencyKey,
      result: { text: resultText(task.runId, task.step) },
      attempt: 1,
      deduped: false,
      durationMs: 1,
    },
    {
      id: `${task.idempotencyKey}:result`,
      runId: task.runId,
      ts: new Date().toISOString(),
      correlationId: task.correlationId,
      causationId: task.causationId,
    },
  );
  const { lastSeq } = await env.setup.store.append(task.runId, [event], { expectedSeq: 'any' });
  const decide: DecideTask = { v: TASK_VERSION, runId: task.runId, afterSeq: lastSeq, reason: 'observation' };
  await env.setup.js.publish(SUBJECTS.decideTask, JSON.stringify(decide), {
    msgID: `${task.runId}@${lastSeq}`,
  });
}

interface Measured {
  log: RunEvent[];
  bytes: number;
}

/** Runs `decisions` model decisions to completion and sums the bytes of the run's messages in the stream. */
async function runWith(runId: string, decisions: number): Promise<Measured> {
  const input = `Read the document for ${runId}.`;
  plans.set(input, decisions);
  const request = { v: RUN_REQUEST_VERSION, runId, agent: { kind: 'agent', name: 'reader' }, input };
  await env.setup.js.publish(SUBJECTS.submit, JSON.stringify(request), { msgID: runId });
  const log = await eventually(
    async () => {
      const events = await env.setup.store.read(runId);
      return events.at(-1)?.type === 'run_completed' ? events : undefined;
    },
    `${runId} to complete`,
    90_000,
  );
  const stored = await storedMessages(env.setup.jsm, STREAMS.runs, runSubject(runId));
  expect(stored.map((m) => m.seq)).toEqual(log.map((e) => e.seq));
  const bytes = stored.reduce((sum, m) => sum + m.data.length, 0);
  return { log, bytes };
}

function thoughtsOf(log: readonly RunEvent[]) {
  return log.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
}

describe('the stored history of an agent run', () => {
  it('grows linearly with the conversation: 100 decisions cost about ten times the bytes of 10', async () => {
    const small = await runWith('growth-10', 10);
    const large = await runWith('growth-100', 100);
    const ratio = large.bytes / small.bytes;
    console.log(
      `history growth: 10 decisions = ${small.bytes} bytes, 100 decisions = ${large.bytes} bytes ` +
        `(ratio ${ratio.toFixed(2)}; linear ~10, quadratic ~100)`,
    );

    for (const [{ log }, decisions] of [
      [small, 10],
      [large, 100],
    ] as const) {
      const state = fold(log);
      expect(state.status).toBe('completed');
      expect(state.decisions).toBe(decisions);
      expect(state.steps).toBe(decisions - 1);
      // Every result is new text: the conversation the model saw really grew by ~1 KB per decision.
      const last = llm()
        .requests.filter((r) => inputOf(r.body) === state.request?.input)
        .at(-1);
      const sent = JSON.stringify((last?.body as WireBody | undefined)?.messages ?? []).length;
      expect(sent).toBeGreaterThan((decisions - 1) * RESULT_CHARS);
    }
    expect(ratio).toBeGreaterThan(5);
    expect(ratio).toBeLessThan(15);
  });

  it('records each message of the conversation once, and the chain of records rebuilds every input', async () => {
    const { log } = await runWith('growth-chain', 30);
    const thoughts = thoughtsOf(log);
    expect(thoughts).toHaveLength(30);
    const seen = new Set<string>();
    for (const thought of thoughts) {
      for (const message of thought.prompt?.messages ?? []) {
        const text = canonicalJson(message);
        expect(seen.has(text), `recorded twice: ${text.slice(0, 200)}`).toBe(false);
        seen.add(text);
      }
    }
    // system + input, then per tool call the assistant's message and the result.
    expect(seen.size).toBe(2 + 29 * 2);
    const byHash = new Map(thoughts.map((t) => [t.prompt!.hash, t.prompt!]));
    const requests = llm().requests.filter((r) => inputOf(r.body) === 'Read the document for growth-chain.');
    expect(requests).toHaveLength(30);
    thoughts.forEach((thought, i) => {
      expect(thought.prompt!.prefix).toBe(i === 0 ? null : thoughts[i - 1]!.prompt!.hash);
      expect(expandPrompt(thought.prompt!, byHash)).toHaveLength(
        (requests[i]!.body as WireBody).messages.length,
      );
    });
  });
});
