// N, a long line: what joining a rate's line costs when thousands already wait in it (issue 33), and asking
// once the line is full. The line is one KV record that each admission reads whole (and a join writes).
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { LINE_RECHECK_MAX_MS, MAX_LINE, QUEUE_GRACE_MS, type LimitRecord, type ModelLimit } from '@dura/core';
import { createFlowControl, createFlowStore, FLOW_BUCKET } from '@dura/planner';
import type { Logger } from '@dura/service-kit';
import type { BenchScenarios } from '../schema';
import { distribution } from '../stats';

const MODEL = 'openai/bench-line';
/** One call a minute: nobody in line goes while it is timed. */
const LIMIT: ModelLimit = { model: MODEL, requestsPerMinute: 1 };
/** Joins timed, as the line fills up to `MAX_LINE`; as many callers then ask with no place left. */
const JOINS = 100;

type LineJoin = NonNullable<NonNullable<BenchScenarios['admission']>['lineJoin']>;

/** A line of `count` callers as bench O's runs leave it: one joining every 50 ms, each asleep until its turn. */
function lineOf(count: number, now: number): NonNullable<LimitRecord['line']> {
  const line: NonNullable<LimitRecord['line']> = {};
  for (let i = 1; i <= count; i++) {
    const since = now - (count - i) * 50;
    line[`cap-${String(i).padStart(6, '0')}:0`] = {
      tenant: 'default',
      priority: 0,
      since,
      until: since + Math.min(LINE_RECHECK_MAX_MS, i * 60_000) + QUEUE_GRACE_MS,
    };
  }
  return line;
}

export async function lineJoinCost(nc: NatsConnection, log: Logger): Promise<LineJoin> {
  const store = createFlowStore({ js: jetstream(nc), log });
  const flow = createFlowControl({ store, limits: [LIMIT] });
  const call = (i: number) => ({
    runId: `cap-${String(i).padStart(6, '0')}`,
    decision: 0,
    tenant: 'default',
    model: MODEL,
    inputTokens: 20,
    outputTokens: 2,
  });
  // The bucket's one call takes its ticket; the line is written as it would stand once `MAX_LINE - JOINS`
  // callers joined.
  await flow.admit(call(0));
  const prefilled = MAX_LINE - JOINS;
  await store.update(MODEL, (record) => ({
    record: { ...record, line: lineOf(prefilled, Date.now()) },
    result: undefined,
  }));
  const timed = async (from: number): Promise<number[]> => {
    const samples: number[] = [];
    for (let i = from; i < from + JOINS; i++) {
      const began = performance.now();
      const admission = await flow.admit(call(i));
      samples.push(performance.now() - began);
      if (admission.kind !== 'wait') throw new Error(`caller ${i} was admitted in a line of ${prefilled}`);
    }
    return samples;
  };
  const joinMs = await timed(prefilled + 1);
  const fullMs = await timed(MAX_LINE + 1);
  const jsm = await jetstreamManager(nc);
  const subject = `$KV.${FLOW_BUCKET}.l.${Buffer.from(MODEL, 'utf8').toString('base64url')}`;
  const stored = await jsm.streams.getMessage(`KV_${FLOW_BUCKET}`, { last_by_subj: subject });
  const recordBytes = stored?.data.length ?? 0;
  return {
    callersInLine: MAX_LINE,
    recordBytes,
    bytesPerCaller: Math.round((recordBytes / MAX_LINE) * 10) / 10,
    joinMs: distribution(joinMs),
    fullLineMs: distribution(fullMs),
  };
}
