import type { IncomingMessage } from 'node:http';
import type { HttpResponse } from '@dura/service-kit';
import type { Caller } from './auth/caller';

/** How many live run streams may be open at once: per credential, and in the whole process. */
export interface StreamLimits {
  perToken: number;
  total: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perToken: 20, total: 1000 };

/** Seconds a refused client is told to wait (`Retry-After`). */
const RETRY_AFTER_S = 5;

export type SlotResult = { release: () => void } | { refused: HttpResponse };

/**
 * Counts open live streams per credential and in total; a stream over either limit is refused with 429. A
 * credential is its kind, issuer, tenant and name together: a JWT of another tenant or issuer that carries
 * the name of a configured token (or no `sub` at all) has slots of its own and never uses up another's.
 * Callers of an API without credentials are told apart by address.
 */
export function createStreamSlots(limits: StreamLimits) {
  const open = new Map<string, number>();
  let total = 0;

  function keyOf(caller: Caller, req: IncomingMessage): string {
    return caller.kind === 'open'
      ? `anonymous@${req.socket.remoteAddress ?? '?'}`
      : JSON.stringify([caller.kind, caller.issuer ?? '', caller.tenant, caller.name]);
  }

  function acquire(caller: Caller, req: IncomingMessage): SlotResult {
    const key = keyOf(caller, req);
    const mine = open.get(key) ?? 0;
    if (mine >= limits.perToken)
      return refuse(
        'too_many_streams',
        `this credential already has ${mine} live run streams open (at most ${limits.perToken}, PROJECTOR_SSE_MAX_PER_TOKEN): close one (or follow several runs from one client) and retry`,
      );
    if (total >= limits.total)
      return refuse(
        'streams_exhausted',
        `the projector serves ${total} live run streams, its limit (PROJECTOR_SSE_MAX_TOTAL): retry in ${RETRY_AFTER_S} s, or read GET /runs/:id/events and poll`,
      );
    open.set(key, mine + 1);
    total += 1;
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        total -= 1;
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      },
    };
  }

  return { acquire, openStreams: () => total };
}

export type StreamSlots = ReturnType<typeof createStreamSlots>;

function refuse(code: string, message: string): SlotResult {
  return {
    refused: {
      status: 429,
      body: { error: { code, message } },
      headers: { 'retry-after': String(RETRY_AFTER_S) },
    },
  };
}

/** The stream response, releasing the slot when the stream ends (or at once if it is not a stream). */
export function holdingSlot(response: HttpResponse, release: () => void): HttpResponse {
  if (!('stream' in response)) {
    release();
    return response;
  }
  return { ...response, stream: (res, signal) => response.stream(res, signal).finally(release) };
}
