import type { JetStreamManager } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/nats-core';
import { runSubject, STREAMS, tokensSubject } from '@dura/contracts';

/** One stored message of a run's log. */
export interface StoredRunMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  header?: MsgHdrs;
}

/**
 * Reads of a run's log that create no consumer: one message get per event. Needs only
 * `$JS.API.DIRECT.GET.DURA_RUNS` and `$JS.API.STREAM.MSG.GET.DURA_RUNS`, so a user that may not create
 * consumers (the `client` permission set) can read and follow runs.
 */
export interface RunReader {
  /**
   * The run's first message at or after `seq`, or null when the log holds none (yet). A direct get may be
   * answered by any replica, one that lags included: null from it means "not here yet", never "not there";
   * `leader: true` asks the stream leader, which holds every acknowledged message.
   */
  next(runId: string, seq: number, options?: { leader?: boolean }): Promise<StoredRunMessage | null>;
  /** Stream sequence of the run's last message as the stream leader knows it, or 0 when it has none. */
  lastSeq(runId: string): Promise<number>;
  /**
   * Every message of the run from `fromSeq` through its last message as the leader knew it when the read
   * began: a lagging replica delays the read (the missing step is asked of the leader), never shortens it.
   */
  readAll(runId: string, fromSeq: number): Promise<StoredRunMessage[]>;
}

/** A stream with one subject per run, read by sequence: the run log, or the run's live model text. */
export interface PerRunStream {
  stream: string;
  subject: (runId: string) => string;
}

export const RUN_LOG: PerRunStream = { stream: STREAMS.runs, subject: runSubject };
export const RUN_TOKENS: PerRunStream = { stream: STREAMS.tokens, subject: tokensSubject };

/** Reads of a run's messages in `source` (default: the run log) by message get. */
export function createRunReader(jsm: JetStreamManager, source: PerRunStream = RUN_LOG): RunReader {
  const { stream, subject: subjectOf } = source;
  // Until the stream is seen to answer direct gets (allow_direct, set by the planner's stream update), the
  // leader answers them all: a stream created by an older version answers a direct get with no responders.
  let direct = true;

  async function leaderNext(subject: string, seq: number): Promise<StoredRunMessage | null> {
    // STREAM.MSG.GET with `next_by_subj` (server 2.9+); nats.js types only know seq and last_by_subj.
    const msg = await jsm.streams.getMessage(stream, { next_by_subj: subject, seq } as never);
    if (msg === null || msg.subject !== subject) return null;
    return { seq: msg.seq, subject: msg.subject, data: msg.data, header: msg.header };
  }

  async function next(
    runId: string,
    seq: number,
    options: { leader?: boolean } = {},
  ): Promise<StoredRunMessage | null> {
    const subject = subjectOf(runId);
    const from = Math.max(1, seq);
    if (options.leader || !direct) return leaderNext(subject, from);
    try {
      const msg = await jsm.direct.getMessage(stream, { next_by_subj: subject, seq: from });
      if (msg === null || msg.subject !== subject) return null;
      return { seq: msg.seq, subject: msg.subject, data: msg.data, header: msg.header };
    } catch (err) {
      if (!isNoResponders(err)) throw err;
      direct = false;
      return leaderNext(subject, from);
    }
  }

  async function lastSeq(runId: string): Promise<number> {
    const msg = await jsm.streams.getMessage(stream, { last_by_subj: subjectOf(runId) });
    return msg?.seq ?? 0;
  }

  async function readAll(runId: string, fromSeq: number): Promise<StoredRunMessage[]> {
    const last = await lastSeq(runId);
    const out: StoredRunMessage[] = [];
    let cursor = Math.max(1, fromSeq);
    while (cursor <= last) {
      // Nothing from a replica before the leader's last seq: the replica lags, so the leader answers.
      const msg = (await next(runId, cursor)) ?? (await next(runId, cursor, { leader: true }));
      if (msg === null) break;
      out.push(msg);
      cursor = msg.seq + 1;
    }
    return out;
  }

  return { next, lastSeq, readAll };
}

function isNoResponders(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.name === 'NoRespondersError' || /no responders/i.test(e.message) || /\b503\b/.test(e.message))
      return true;
  }
  return false;
}
