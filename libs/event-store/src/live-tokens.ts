import { randomBytes } from 'node:crypto';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { TokenMessageSchema, tokensSubject, type LiveText, type TokenMessage } from '@dura/contracts';
import { createRunReader, RUN_TOKENS } from './run-reads';

export interface LiveTokensOptions {
  /** A new attempt's id (default: 16 random hex characters). */
  attemptId?: () => string;
  /** Tries of one message before its number is given up (readers are then told of a gap). Default 3. */
  tries?: number;
  /** Told once per attempt whose text was partly given up. */
  onLost?: (attempt: string, err: unknown) => void;
}

/** Longest text in one message; a burst that piled up while a publish was in flight is sent in pieces. */
const MAX_PIECE = 16 * 1024;

interface CallStream {
  attempt: string;
  n: number;
  pending: string;
  sending: boolean;
  lost: boolean;
}

/**
 * Publishes a decision's live model text to `DURA_TOKENS`, tagged by run, decision, call and attempt. Off the
 * decision's critical path: `delta` returns at once, and a call has one publish in flight at a time, with
 * the text that came meanwhile sent as the next message (so a slow server means fewer, larger messages, in
 * order). Never fails the run: a message that cannot be stored after `tries` is given up, and its number is
 * skipped, so readers see the gap instead of text silently missing. Each message's msg-id makes a retried
 * publish harmless.
 */
export function createLiveTokens(
  js: JetStreamClient,
  runId: string,
  decision: number,
  options: LiveTokensOptions = {},
): LiveText & { flush(): Promise<void> } {
  const subject = tokensSubject(runId);
  const newAttempt = options.attemptId ?? (() => randomBytes(8).toString('hex'));
  const tries = Math.max(1, options.tries ?? 3);
  const calls = new Map<number, CallStream>();
  const sending = new Set<Promise<void>>();

  function streamOf(call: number): CallStream {
    let found = calls.get(call);
    if (!found) {
      found = { attempt: newAttempt(), n: 0, pending: '', sending: false, lost: false };
      calls.set(call, found);
    }
    return found;
  }

  async function publish(message: TokenMessage): Promise<void> {
    let last: unknown;
    for (let i = 0; i < tries; i += 1) {
      try {
        await js.publish(subject, JSON.stringify(message), { msgID: `tok:${message.attempt}:${message.n}` });
        return;
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  async function drain(call: number, stream: CallStream): Promise<void> {
    while (stream.pending !== '') {
      const delta = stream.pending.slice(0, MAX_PIECE);
      stream.pending = stream.pending.slice(delta.length);
      const message: TokenMessage = { runId, decision, call, attempt: stream.attempt, n: stream.n, delta };
      stream.n += 1;
      await publish(message).catch((err: unknown) => {
        if (!stream.lost) options.onLost?.(message.attempt, err);
        stream.lost = true;
      });
    }
  }

  function kick(call: number, stream: CallStream): void {
    if (stream.sending) return;
    stream.sending = true;
    const done = drain(call, stream).finally(() => {
      stream.sending = false;
      sending.delete(done);
    });
    sending.add(done);
  }

  return {
    delta(call, text) {
      if (text === '') return;
      const stream = streamOf(call);
      stream.pending += text;
      kick(call, stream);
    },
    restart(call) {
      const stream = calls.get(call);
      if (!stream || (stream.n === 0 && stream.pending === '')) return;
      // What is being sent of the old attempt stays; what was not yet sent is void.
      Object.assign(stream, { attempt: newAttempt(), n: 0, pending: '', lost: false });
    },
    async flush() {
      while (sending.size > 0) await Promise.all([...sending]);
    },
  };
}

/** The run's token messages still retained, in stream order (malformed ones left out): for inspection and tests. */
export async function readStoredTokens(jsm: JetStreamManager, runId: string): Promise<TokenMessage[]> {
  const stored = await createRunReader(jsm, RUN_TOKENS).readAll(runId, 1);
  return stored.flatMap((msg) => {
    const parsed = TokenMessageSchema.safeParse(jsonOf(msg.data));
    return parsed.success ? [parsed.data] : [];
  });
}

/** The JSON in `data`, or undefined when it is not JSON. */
export function jsonOf(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as unknown;
  } catch {
    return undefined;
  }
}
