import type { RequestProblem } from './client-errors';
import type { CallTarget } from './errors';
import { attemptOnce, readJson } from './http';
import { withRetries, type ResolvedSettings } from './retry';
import type { ChatRequest, ChatResponse } from './types';

export interface ChatCall {
  target: CallTarget;
  settings: ResolvedSettings;
  /** Where the request goes, for messages. */
  url: string;
  request: ChatRequest;
  /** Sends the request through the provider's client (see `Attempt.send`). */
  send: (signal: AbortSignal) => Promise<Response>;
  problem: (err: unknown) => RequestProblem | undefined;
  /** Reads a streamed answer, handing its text to `onDelta` as it comes. */
  readStreamed: (response: Response, onDelta: (text: string) => void) => Promise<ChatResponse>;
  /** Reads a whole answer from its JSON body. */
  readWhole: (json: unknown) => ChatResponse;
}

/**
 * A chat request to a provider, attempted until it is answered or the retries run out (`withRetries`). The
 * answer is streamed when the request has `onDelta`, else read whole.
 */
export function callWithRetries(call: ChatCall): Promise<ChatResponse> {
  const { target, settings, request } = call;
  const onDelta = request.onDelta;
  let reads = 0;
  return withRetries(target, settings, request.signal, () =>
    attemptOnce({
      target,
      settings,
      url: call.url,
      signal: request.signal,
      send: call.send,
      problem: call.problem,
      read: async (response) => {
        // A retried attempt streams its answer from the start: what the previous one streamed is void.
        if (onDelta && (reads += 1) > 1) request.onRestart?.();
        return onDelta ? call.readStreamed(response, onDelta) : call.readWhole(await readJson(response));
      },
    }),
  );
}
