// L: first-token latency of the token stream. A code agent's model call answers from a fake OpenAI-compatible
// server in this process; a client reads GET /runs/:id/tokens from the projector process. Measured from the
// server writing the answer's first text piece to the client reading the first `token` event: the planner's
// adapter, its publish to DURA_TOKENS, the projector's read by message get and its SSE write.
import { fileURLToPath } from 'node:url';
import { createDuraClient } from '@dura/client';
import { parseTokenFeedEvent } from '@dura/contracts';
import { openSse, startFakeLlmServer } from '@dura/testing';
import { openDeployment } from '../deployment';
import { countReporter } from '../progress';
import type { BenchScenarios } from '../schema';
import { distribution } from '../stats';
import { BENCH_TELLER_AGENT } from './teller-agent';

const AGENT_MODULE = fileURLToPath(new URL('./teller-agent.ts', import.meta.url));
const ANSWER = Array.from({ length: 40 }, (_, i) => `word${i} `).join('');

const now = (): number => performance.timeOrigin + performance.now();

export async function tokenLatency(sizes: {
  tokenRuns: number;
}): Promise<NonNullable<BenchScenarios['tokens']>> {
  // Each answer waits until its client's stream is open, as for a page already showing the run.
  const readers = new Map<string, () => void>();
  const opened = new Map<string, Promise<void>>();
  const readerOf = (prompt: string): Promise<void> => {
    let found = opened.get(prompt);
    if (!found) {
      found = new Promise<void>((resolve) => readers.set(prompt, resolve));
      opened.set(prompt, found);
    }
    return found;
  };
  await using llm = await startFakeLlmServer({
    provider: 'openai',
    respond: async ({ body }) => {
      const messages = (body as { messages: { role: string; content: string }[] }).messages;
      await readerOf(messages.findLast((m) => m.role === 'user')?.content ?? '');
      return { kind: 'message', content: ANSWER, pieceChars: 8, pieceDelayMs: 2 };
    },
  });
  await using deployment = await openDeployment('tokens', {
    DURA_AGENTS: AGENT_MODULE,
    BENCH_MODEL_URL: llm.url,
  });
  const projector = await deployment.start('projector');
  await deployment.start('tool-gateway');
  await deployment.start('planner');
  const apiUrl = projector.apiUrl ?? '';
  const client = createDuraClient(deployment);
  const report = countReporter('L: first token through GET /runs/:id/tokens', sizes.tokenRuns, 5);
  const samples: number[] = [];
  for (let i = 0; i < sizes.tokenRuns; i += 1) {
    const runId = `tok-${i}`;
    const asked = llm.requests.length;
    const prompt = `tell run ${i}`;
    void readerOf(prompt);
    await client.submitRun({ runId, agent: { kind: 'agent', name: BENCH_TELLER_AGENT }, input: `run ${i}` });
    // The route answers once the run is in the projection.
    const deadline = Date.now() + 30_000;
    let sse = await openSse(`${apiUrl}/runs/${runId}/tokens`);
    while (sse.status === 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      sse = await openSse(`${apiUrl}/runs/${runId}/tokens`);
    }
    if (sse.status !== 200) throw new Error(`GET /runs/${runId}/tokens answered ${sse.status}`);
    let firstToken: number | undefined;
    let ended: string | undefined;
    let live = false;
    for await (const message of sse.messages) {
      if (message.comment === 'live tokens') {
        live = true;
        readers.get(prompt)?.();
      }
      const event = parseTokenFeedEvent(message.event, message.data);
      if (event?.event === 'token') firstToken ??= now();
      if (event?.event === 'end') {
        ended = event.data.status;
        break;
      }
    }
    sse.drop();
    const firstPiece = llm.requests[asked]?.firstPieceAt;
    if (ended !== 'completed' || firstToken === undefined || firstPiece === undefined)
      throw new Error(
        `run ${runId}: its token stream did not deliver the answer and the end (end: ${ended ?? 'none'}, a token: ${firstToken !== undefined}, live: ${live}, the model sent a piece: ${firstPiece !== undefined}, model requests: ${llm.requests.length - asked})`,
      );
    samples.push(firstToken - firstPiece);
    report(i + 1);
  }
  return {
    mode: 'processes',
    note: `fake model server (answering once the client's stream is open, ${ANSWER.length} characters in 8-character pieces) → planner → DURA_TOKENS → projector → SSE client, one run at a time`,
    runs: sizes.tokenRuns,
    firstTokenMs: distribution(samples),
  };
}
