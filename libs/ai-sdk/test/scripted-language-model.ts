// An AI SDK language model in process for the unit tests: answers each call from a script of the prompt's
// last message, as a whole (doGenerate) or as a stream of parts (doStream), and counts what it was asked.
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';

export interface ScriptedReply {
  text?: string;
  calls?: { name: string; input: unknown }[];
}

export interface ScriptedModel extends LanguageModelV4 {
  /** Every call made, in order: its mode and the prompt's last message as text. */
  readonly asked: { mode: 'generate' | 'stream'; last: string; options: LanguageModelV4CallOptions }[];
}

const usage = {
  inputTokens: { total: 11, noCache: 11, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The last message of a prompt as text: a user's text, or a tool result's output. */
export function lastText(prompt: LanguageModelV4Prompt): string {
  const last = prompt.at(-1);
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'tool-result') return `${part.toolName}=${JSON.stringify(part.output)}`;
      return part.type;
    })
    .join(' ');
}

export function scriptedModel(script: (last: string, call: number) => ScriptedReply): ScriptedModel {
  const asked: ScriptedModel['asked'] = [];
  const reply = (
    mode: 'generate' | 'stream',
    options: LanguageModelV4CallOptions,
  ): LanguageModelV4Content[] => {
    const last = lastText(options.prompt);
    asked.push({ mode, last, options });
    const r = script(last, asked.length - 1);
    return [
      ...(r.text ? [{ type: 'text' as const, text: r.text }] : []),
      ...(r.calls ?? []).map((c, i) => ({
        type: 'tool-call' as const,
        toolCallId: `call-${asked.length}-${i}`,
        toolName: c.name,
        input: JSON.stringify(c.input),
      })),
    ];
  };
  const finishOf = (content: LanguageModelV4Content[]) => ({
    unified: content.some((c) => c.type === 'tool-call') ? ('tool-calls' as const) : ('stop' as const),
    raw: undefined,
  });
  return {
    specificationVersion: 'v4',
    provider: 'scripted.chat',
    modelId: 'scripted-1',
    supportedUrls: {},
    asked,
    doGenerate(options) {
      const content = reply('generate', options);
      return Promise.resolve({
        content,
        finishReason: finishOf(content),
        usage,
        response: {
          id: `resp-${asked.length}`,
          modelId: 'scripted-1',
          timestamp: new Date(1_700_000_000_000),
        },
        warnings: [],
      });
    },
    doStream(options) {
      const content = reply('stream', options);
      const parts: LanguageModelV4StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        {
          type: 'response-metadata',
          id: `resp-${asked.length}`,
          modelId: 'scripted-1',
          timestamp: new Date(0),
        },
      ];
      for (const item of content) {
        if (item.type === 'text') {
          parts.push({ type: 'text-start', id: 't' });
          for (const piece of item.text.match(/.{1,4}/gs) ?? [])
            parts.push({ type: 'text-delta', id: 't', delta: piece });
          parts.push({ type: 'text-end', id: 't' });
        } else parts.push(item as LanguageModelV4StreamPart);
      }
      parts.push({ type: 'finish', usage, finishReason: finishOf(content) });
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      return Promise.resolve({ stream });
    },
  };
}
