// Context management across a crash (issue 7, acceptance 2: one fault test per capability).
//
// An agent with a small context window (400 tokens) reads a report part by part; every part is ~600
// characters, so after three steps the conversation outgrows 75 % of the window. Before the next decision the
// planner asks the model for a summary of the older steps (all but the two most recent) and records it
// (`context_summarized`); later inputs carry the summary instead of those steps. The worst moment to die is
// right after the summary is recorded, before the decision it was made for (failpoint
// planner.after-summary): the planner that picks the run up must not ask for the summary again, and must
// send the recorded summary in place of the summarized steps.
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { expectKilledAt, logOf, useCrashSystem, watchToEnd } from './crash-harness';
import {
  AGENT_TOOLS_ENV,
  fakeModel,
  isSummarization,
  requestsPerDecision,
  toolResults,
  useScriptedLlm,
  writeAgentsFile,
  type WireBody,
  type WireMessage,
} from './scripted-llm';
import { reportText } from './agent2-tools';

const PARTS = 3;
const SUMMARY = 'Part 1 of the report was read; its figures start with Line 1.1.';
const SUMMARY_PREFIX = 'Summary of the earlier steps of this run:\n';

const fake = useScriptedLlm();
const crash = useCrashSystem(['tool-gateway', 'projector'], { env: () => AGENT_TOOLS_ENV });

/** Reads parts 1..PARTS, then answers; a summary request gets SUMMARY. */
function reader(body: WireBody) {
  if (isSummarization(body)) return { kind: 'message' as const, content: SUMMARY };
  const read = toolResults(body).length + (mentionsSummary(body.messages) ? 1 : 0);
  if (read >= PARTS) return { kind: 'message' as const, content: `Read ${PARTS} parts.` };
  return {
    kind: 'message' as const,
    content: `Reading part ${read + 1}.`,
    toolCalls: [{ name: 'report__fetch', arguments: { part: read + 1 } }],
  };
}

function mentionsSummary(messages: readonly WireMessage[]): boolean {
  return messages.some((m) => m.role === 'user' && (m.content ?? '').startsWith(SUMMARY_PREFIX));
}

function callIdsIn(messages: readonly WireMessage[]): string[] {
  return messages.flatMap((m) =>
    m.role === 'tool' ? [m.tool_call_id ?? ''] : (m.tool_calls ?? []).map((call) => call.id),
  );
}

const typesOf = (log: readonly RunEvent[]) => log.map((e) => e.type);

describe('an agent run whose conversation outgrows its context window', () => {
  it('killed right after the summary is recorded: never asks for it again and decides on the summary', async () => {
    const sys = crash();
    const llm = fake.llm();
    const runId = 'context-summary';
    const input = 'Read the quarterly report and tell me when you are done.';
    llm.script(input, reader);
    const agents = await writeAgentsFile(fake.dir(), 'context-agents', {
      agents: [
        {
          name: 'reader',
          version: '1',
          systemPrompt: 'You read reports part by part.',
          model: fakeModel(llm.url, { maxTokens: 50, contextTokens: 400 }),
          tools: ['report.fetch'],
        },
      ],
    });

    await sys.restart('planner', 'planner.after-summary:1', { DURA_AGENTS: agents });
    await sys.submit({ runId, agent: { kind: 'agent', name: 'reader' }, input });
    await expectKilledAt(sys, 'planner', 'planner.after-summary:1');

    // Three parts read, the summary recorded, the decision it was made for not asked yet.
    const atKill = await logOf(sys, runId);
    expect(atKill.at(-1)?.type).toBe('context_summarized');
    expect(atKill.at(-1)?.data).toMatchObject({ throughStep: 1, summary: SUMMARY });
    expect(fold(atKill).steps).toBe(PARTS);
    const beforeRestart = llm.requestsFor(input);
    expect(beforeRestart.filter(isSummarization)).toHaveLength(1);
    expect(requestsPerDecision(beforeRestart)).toEqual({ start: 1, 'call-1': 1, 'call-2': 1 });
    // The summary request carried the steps to compress (the first part's text among them).
    const summaryRequest = beforeRestart.find(isSummarization)!;
    expect(summaryRequest.tools ?? []).toEqual([]);
    expect(summaryRequest.messages[1]?.content).toContain('Steps 1 to 1 of the run');
    expect(summaryRequest.messages[1]?.content).toContain(reportText(1).slice(0, 80));

    await sys.restart('planner', undefined, { DURA_AGENTS: agents });
    const log = await watchToEnd(sys, runId, 30_000);
    expect(typesOf(log)).toEqual([
      'run_requested',
      'run_started',
      ...Array(PARTS).fill(['thought', 'tool_call_requested', 'tool_call_completed']).flat(),
      'context_summarized',
      'thought',
      'run_completed',
    ]);
    const state = fold(log);
    expect(state.output).toBe(`Read ${PARTS} parts.`);
    expect(state.summary).toEqual({ throughStep: 1, text: SUMMARY });

    // The summary was asked for once; every decision was asked once.
    const asked = llm.requestsFor(input);
    expect(asked.filter(isSummarization)).toHaveLength(1);
    expect(requestsPerDecision(asked)).toEqual({ start: 1, 'call-1': 1, 'call-2': 1, 'call-3': 1 });

    // The last decision saw the summary in place of step 1, and steps 2 and 3 as they were.
    const last = asked.filter((b) => !isSummarization(b)).at(-1)!;
    const summaryMessages = last.messages.filter(
      (m) => m.role === 'user' && (m.content ?? '').startsWith(SUMMARY_PREFIX),
    );
    expect(summaryMessages.map((m) => m.content)).toEqual([`${SUMMARY_PREFIX}${SUMMARY}`]);
    expect(callIdsIn(last.messages)).toEqual(['call-2', 'call-2', 'call-3', 'call-3']);
    expect(JSON.stringify(last.messages)).not.toContain(reportText(1).slice(0, 80));
    // The previous decision (before the summary) still carried step 1 in full.
    const before = asked.filter((b) => !isSummarization(b)).at(-2)!;
    expect(callIdsIn(before.messages)).toEqual(['call-1', 'call-1', 'call-2', 'call-2']);

    // The recorded input of the last thought holds the summary, not step 1.
    const thought = log.filter((e) => e.type === 'thought').at(-1);
    const recorded = thought?.type === 'thought' ? (thought.data.prompt?.messages ?? []) : [];
    expect(recorded).toContainEqual({ role: 'user', content: `${SUMMARY_PREFIX}${SUMMARY}` });
    expect(JSON.stringify(recorded)).not.toContain('call-1');

    for (const call of state.calls) expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
  });
});
