import { describe, expect, it } from 'vitest';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { answerOfStream, assembleStream, streamResultOf } from '../src/stream-answer';
import { type ModelAnswer } from '@dura/code-agents';
import { recordedAnswer } from '@dura/code-agents/engine';

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 4, text: 4, reasoning: undefined },
};
const finish: LanguageModelV4StreamPart = {
  type: 'finish',
  usage,
  finishReason: { unified: 'stop', raw: 'stop' },
};

function streamOf(parts: LanguageModelV4StreamPart[]): ReadableStream<LanguageModelV4StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

describe('a streamed answer', () => {
  it('given text in pieces, when assembled, then the live tokens get each piece and the record one part per text', async () => {
    const live: string[] = [];
    const parts = await assembleStream(
      streamOf([
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: 'r', modelId: 'm-2', timestamp: new Date(5) },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        { type: 'raw', rawValue: { noise: true } },
        { type: 'text-delta', id: 't', delta: 'lo' },
        { type: 'text-end', id: 't' },
        finish,
      ]),
      (delta) => live.push(delta),
    );

    expect(live).toEqual(['Hel', 'lo']);
    expect(parts.map((p) => (p.type === 'text-delta' ? `delta:${p.delta}` : p.type))).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      'delta:Hello',
      'text-end',
      'finish',
    ]);
    const answer = answerOfStream(parts, { modelId: 'm-1' });
    expect(answer).toMatchObject({
      content: 'Hello',
      modelId: 'm-2',
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it('given a recorded stream, when replayed, then the parts come back with their dates', async () => {
    const parts = await assembleStream(
      streamOf([{ type: 'response-metadata', id: 'r', timestamp: new Date(5) }, finish]),
      undefined,
    );
    const recorded: ModelAnswer = JSON.parse(
      JSON.stringify(recordedAnswer(answerOfStream(parts, { modelId: 'm' }), { version: '1' }, undefined)),
    );
    const replayed: LanguageModelV4StreamPart[] = [];
    const reader = streamResultOf(recorded).stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) replayed.push(next.value);

    expect(replayed[0]).toEqual({ type: 'response-metadata', id: 'r', timestamp: new Date(5) });
    expect(replayed[1]).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
  });

  it('given a stream that reports an error or ends before finishing, when assembled, then it is no answer: retried, not recorded', async () => {
    const broken = assembleStream(streamOf([{ type: 'error', error: new Error('overloaded') }]), undefined);
    await expect(broken).rejects.toMatchObject({ code: 'model_unavailable', retryable: true });
    await expect(broken).rejects.toThrow(/the model stream reported an error: overloaded/);
    const cut = assembleStream(streamOf([{ type: 'text-delta', id: 't', delta: 'Hi' }]), undefined);
    await expect(cut).rejects.toThrow(/ended before its finish part/);
  });
});
