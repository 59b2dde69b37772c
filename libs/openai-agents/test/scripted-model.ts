// An Agents SDK model answering from a script by how many tool results its input carries, counting what it
// was asked: the durable model must ask it once per recorded call, however often the code is replayed.
import { Usage, type AgentOutputItem, type Model, type ModelRequest, type StreamEvent } from '@openai/agents';

export interface ScriptedTurn {
  text?: string;
  calls?: { name: string; input: Record<string, unknown> }[];
}

export interface ScriptedModel extends Model {
  asked: { mode: 'response' | 'stream'; results: number }[];
}

const resultsIn = (request: ModelRequest): number =>
  typeof request.input === 'string'
    ? 0
    : request.input.filter((item) => item.type === 'function_call_result').length;

function outputOf(turn: ScriptedTurn, results: number): AgentOutputItem[] {
  const output: AgentOutputItem[] = [];
  if (turn.text)
    output.push({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text }],
    });
  (turn.calls ?? []).forEach((call, i) =>
    output.push({
      type: 'function_call',
      callId: `call-${results}-${i}`,
      name: call.name,
      arguments: JSON.stringify(call.input),
      status: 'completed',
    }),
  );
  return output;
}

export function scriptedModel(script: (results: number) => ScriptedTurn): ScriptedModel {
  const asked: ScriptedModel['asked'] = [];
  const usage = () => new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });
  return {
    asked,
    getResponse(request) {
      const results = resultsIn(request);
      asked.push({ mode: 'response', results });
      return Promise.resolve({ output: outputOf(script(results), results), usage: usage() });
    },
    async *getStreamedResponse(request): AsyncIterable<StreamEvent> {
      const results = resultsIn(request);
      asked.push({ mode: 'stream', results });
      const turn = script(results);
      yield { type: 'response_started' };
      for (const piece of (turn.text ?? '').match(/.{1,4}/g) ?? [])
        yield { type: 'output_text_delta', delta: piece, itemId: 'msg' };
      yield { type: 'model', event: { raw: true } };
      await Promise.resolve();
      yield {
        type: 'response_done',
        response: {
          id: `resp-${results}`,
          usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 },
          output: outputOf(turn, results) as never,
        },
      };
    },
  };
}
