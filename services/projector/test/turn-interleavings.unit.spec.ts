// A chat turn as its stream reads it, whatever the timing: a code agent's tool step then answer step, each
// call's text streamed by one or two attempts (or not at all), the last pieces stored after their thought, the
// stream opened at any point (the log so far, then the text stored so far) and then both sources live in any
// interleaving (each follower lags on its own). The page must end with each recorded answer exactly once, as
// our `partsOf` folds the chunks and as the AI SDK's own reducer does.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { CODE_JOURNAL_TAG, type RunEvent, type TokenMessage } from '@dura/contracts';
import { RunLog, thoughtData } from '@dura/core/testing';
import { supersededAttempts, type StoredRunMessage } from '@dura/event-store';
import type { UiChunk } from '../src/chat/turn-chunks';
import { textParts } from '../src/chat/turn-log';
import { createTurnReading } from '../src/chat/turn-reading';

const RUN = 'chat-story-1';
const ANSWER = 'The second answer continues the conversation.';
const PS = 'P.S. ask again.';

type Item = { log: RunEvent } | { token: TokenMessage };

interface Shape {
  /** Text the tool step's model call gave with its tool call ('' for none). */
  preamble: string;
  preambleStreamed: boolean;
  /** Attempts of each call: the first of two was asked again after some text. */
  toolStepAttempts: 1 | 2;
  answerAttempts: 1 | 2;
  answerStreamed: boolean;
  pieces: number;
  /** Pieces of each streamed call stored after its thought. */
  late: number;
  /** The answer step asks the model twice. */
  twoCalls: boolean;
}

const journal = (contents: string[]): string =>
  JSON.stringify({
    journal: CODE_JOURNAL_TAG,
    entries: contents.map((content, i) => ({
      k: 'model',
      h: `h${i}`,
      a: {
        content,
        usage: { inputTokens: 1, outputTokens: 1 },
        model: { id: 'm', promptVersion: '1' },
        finishReason: 'stop',
      },
    })),
  });

const split = (text: string, pieces: number): string[] => {
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
};

/** The turn in the order things happened: its log events and its text messages. */
function timelineOf(shape: Shape): { items: Item[]; recorded: string[] } {
  const log = new RunLog(RUN).request();
  log.add('run_started', {
    pinned: { agent: 'chat-assistant', version: '1', promptVersion: '1', provider: 'code', model: 'fake' },
  });
  const items: Item[] = log.events.map((e) => ({ log: e }));
  const logged = (): void => {
    for (const e of log.events.slice(items.filter((i) => 'log' in i).length)) items.push({ log: e });
  };
  /** A decision's calls streamed, the thought appended with what it implies, then the late pieces. */
  const decide = (
    decision: number,
    texts: string[],
    streamed: boolean[],
    attempts: number,
    append: () => void,
  ) => {
    const late: TokenMessage[] = [];
    texts.forEach((text, call) => {
      if (!streamed[call]) return;
      for (let a = 0; a < attempts; a += 1) {
        const attempt = `d${decision}c${call}a${a}`;
        const last = a === attempts - 1;
        const pieces = split(last ? text : `Hmm, let me think ${a}`, shape.pieces);
        const said = last ? pieces : pieces.slice(0, 1);
        said.forEach((delta, n) => {
          const message = { runId: RUN, decision, call, attempt, n, delta };
          if (last && n >= said.length - shape.late) late.push(message);
          else items.push({ token: message });
        });
      }
    });
    append();
    logged();
    for (const message of late) items.push({ token: message });
  };

  const toolStep = [shape.preamble];
  decide(0, toolStep, [shape.preambleStreamed], shape.toolStepAttempts, () => {
    log.add('thought', {
      ...thoughtData({
        kind: 'tool_calls',
        calls: [{ callId: 'c1', tool: 'research.search', args: { q: 'x' } }],
      }),
      content: journal(toolStep),
    });
    log.add('tool_call_requested', {
      callId: 'c1',
      step: 1,
      tool: 'research.search',
      args: { q: 'x' },
      idempotencyKey: 'k1',
    });
  });
  log.add('tool_call_completed', {
    callId: 'c1',
    idempotencyKey: 'k1',
    result: { hits: 1 },
    attempt: 1,
    deduped: false,
    durationMs: 1,
  });
  logged();
  const answerStep = shape.twoCalls ? [ANSWER, PS] : [ANSWER];
  decide(
    1,
    answerStep,
    answerStep.map(() => shape.answerStreamed),
    shape.answerAttempts,
    () => {
      log.add('thought', {
        ...thoughtData({ kind: 'complete', output: { text: ANSWER } }, 1),
        content: journal(answerStep),
      });
      log.finish();
    },
  );
  return { items, recorded: [...toolStep, ...answerStep].filter((t) => t !== '') };
}

const stored = (messages: TokenMessage[]): StoredRunMessage[] =>
  messages.map((m, i) => ({ seq: i + 1, subject: 'x', data: new TextEncoder().encode(JSON.stringify(m)) }));

/**
 * The chunks a stream opened after `logOpen` items sends, having read the text stored after `tokensOpen`
 * items (the log is read first, then the text), then both sources live, merged as `merge` picks.
 */
function streamOf(items: Item[], logOpen: number, tokensOpen: number, merge: boolean[]): UiChunk[] {
  const reading = createTurnReading(RUN);
  const chunks: UiChunk[] = [];
  const logs = items.flatMap((i) => ('log' in i ? [i.log] : []));
  const tokens = items.flatMap((i) => ('token' in i ? [i.token] : []));
  const logRead = items.slice(0, logOpen).filter((i) => 'log' in i).length;
  const tokensRead = items.slice(0, Math.max(logOpen, tokensOpen)).filter((i) => 'token' in i).length;
  for (const e of logs.slice(0, logRead)) chunks.push(...reading.event(e));
  const prefix = tokens.slice(0, tokensRead);
  const superseded = supersededAttempts(stored(prefix));
  for (const m of prefix) chunks.push(...reading.token(m, superseded));
  let [l, t, k] = [logRead, tokensRead, 0];
  while (l < logs.length || t < tokens.length) {
    const fromLog = t >= tokens.length || (l < logs.length && (merge[k++] ?? true));
    chunks.push(...(fromLog ? reading.event(logs[l++]!) : reading.token(tokens[t++]!)));
    if (reading.turn.ended !== undefined) break;
  }
  return chunks;
}

/** The last message the AI SDK's reducer builds from the chunks, as `useChat` does. */
async function sdkMessage(chunks: UiChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c as unknown as UIMessageChunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
  return last;
}

const sdkTexts = (message: UIMessage | undefined): string[] =>
  (message?.parts ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : []));

const shapes = fc.record<Shape>({
  preamble: fc.constantFrom('', 'Let me look that up. '),
  preambleStreamed: fc.boolean(),
  toolStepAttempts: fc.constantFrom(1, 2),
  answerAttempts: fc.constantFrom(1, 2),
  answerStreamed: fc.boolean(),
  pieces: fc.integer({ min: 1, max: 4 }),
  late: fc.integer({ min: 0, max: 2 }),
  twoCalls: fc.boolean(),
});

describe('a chat turn read in any interleaving of its log and its live text', () => {
  it('ends with each recorded answer exactly once, in our fold and in the AI SDK reducer', async () => {
    await fc.assert(
      fc.asyncProperty(
        shapes,
        fc.nat(),
        fc.nat(),
        fc.array(fc.boolean(), { maxLength: 40 }),
        async (shape, a, b, merge) => {
          const { items, recorded } = timelineOf(shape);
          const logOpen = a % (items.length + 1);
          const tokensOpen = logOpen + (b % (items.length + 1 - logOpen));
          const chunks = streamOf(items, logOpen, tokensOpen, merge);
          expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
          expect(textParts(chunks)).toEqual(recorded);
          const message = await sdkMessage(chunks);
          expect(sdkTexts(message)).toEqual(recorded);
          expect(message?.parts.filter((p) => p.type === 'dynamic-tool')).toMatchObject([
            { toolCallId: 'c1', state: 'output-available' },
          ]);
          // Never a mix: whatever the page shows at any point is a prefix of one attempt's text.
          const attempts = [...recorded, 'Hmm, let me think 0'];
          for (let i = 1; i <= chunks.length; i += 1)
            for (const text of textParts(chunks.slice(0, i)))
              expect(
                attempts.some((t) => t.startsWith(text)),
                text,
              ).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  }, 60_000);

  it('the answer step text read before the tool step is in the log is shown once', async () => {
    // The text follower is ahead: the answer streams while the log follower still waits to read the tool step.
    const { items, recorded } = timelineOf({
      preamble: '',
      preambleStreamed: false,
      toolStepAttempts: 1,
      answerAttempts: 1,
      answerStreamed: true,
      pieces: 2,
      late: 0,
      twoCalls: false,
    });
    const chunks = streamOf(items, 2, 2, [false, false]);
    expect(textParts(chunks)).toEqual(recorded);
    expect(sdkTexts(await sdkMessage(chunks))).toEqual([ANSWER]);
  });
});
