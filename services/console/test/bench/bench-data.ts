// Data for `npm run bench:console`: one long run as log events, and many runs as read-model rows.
import { sql, type SQL } from 'drizzle-orm';
import { newEvent, type EventData, type EventType, type NewEvent } from '@dura/contracts';
import { idempotencyKey, initialRunState } from '@dura/core';

/** A completed scripted run of about `count` events: request, start, echo calls (3 events each), the end. */
export function bigRunEvents(runId: string, count: number): NewEvent[] {
  const events: NewEvent[] = [];
  const start = Date.now() - count * 10;
  const add = <T extends EventType>(type: T, data: EventData<T>) => {
    const n = events.length;
    events.push(
      newEvent(type, data, {
        id: `${runId}#${n}`,
        runId,
        ts: new Date(start + n * 10).toISOString(),
        correlationId: runId,
        ...(n > 0 ? { causationId: `${runId}#${n - 1}` } : {}),
      }),
    );
  };
  const thought = (decision: EventData<'thought'>['decision'], step: number): EventData<'thought'> => ({
    step,
    model: { id: 'scripted', promptVersion: 'bench' },
    decision,
    usage: { inputTokens: 20, outputTokens: 5 },
    finishReason: 'stop',
  });
  add('run_requested', { request: { v: 1, runId, agent: { kind: 'scripted', steps: [] }, tags: ['bench'] } });
  add('run_started', {});
  const calls = Math.max(1, Math.ceil((count - 4) / 3));
  for (let step = 1; step <= calls; step += 1) {
    const callId = `call-${step}`;
    const args = { i: step };
    const key = idempotencyKey({ runId, step, tool: 'echo', args });
    add('thought', thought({ kind: 'tool_calls', calls: [{ callId, tool: 'echo', args }] }, step - 1));
    add('tool_call_requested', { callId, step, tool: 'echo', args, idempotencyKey: key });
    add('tool_call_completed', {
      callId,
      idempotencyKey: key,
      result: args,
      attempt: 1,
      deduped: false,
      durationMs: 2,
    });
  }
  add('thought', thought({ kind: 'complete', output: { calls } }, calls));
  add('run_completed', { output: { calls } });
  return events;
}

const STATUSES = ['completed', 'completed', 'completed', 'running', 'waiting', 'failed', 'cancelled'];

/**
 * Inserts `count` runs straight into the read model (ids bench-run-000000…), spread over statuses, times,
 * tags (one in a thousand tagged `rare`) and metadata, each with a valid folded state.
 */
export function seedRunsSql(count: number): SQL {
  // The state as the projector stores it: its request in a column of its own, its (empty) lists in no rows.
  const {
    request: _request,
    calls: _calls,
    turns: _turns,
    signals: _signals,
    ...template
  } = {
    ...initialRunState(),
    status: 'completed',
    correlationId: '',
    lastSeq: 1,
    eventCount: 1,
  };
  const request = { v: 1, runId: '', agent: { kind: 'scripted', steps: [] } };
  return sql`
    insert into runs (run_id, tenant, status, state, request, last_seq, event_count, steps, pending_calls,
                      last_error, input_tokens, output_tokens, tags, metadata, tools, created_at, updated_at)
    select id, 'default', status,
           jsonb_set(jsonb_set(${JSON.stringify(template)}::jsonb, '{runId}', to_jsonb(id)), '{status}', to_jsonb(status)),
           jsonb_set(${JSON.stringify(request)}::jsonb, '{runId}', to_jsonb(id)),
           1, 1, i % 5, 0, null, i % 1000, i % 100,
           case when i % 1000 = 0 then array['bench', 'rare'] else array['bench'] end,
           jsonb_build_object('team', case when i % 3 = 0 then 'pay' else 'ops' end),
           array['echo'], now() - make_interval(secs => i), now() - make_interval(secs => i)
    from (select i, 'bench-run-' || lpad(i::text, 6, '0') as id,
                 (${sql.raw(`array[${STATUSES.map((s) => `'${s}'`).join(',')}]`)})[1 + i % ${STATUSES.length}] as status
          from generate_series(1, ${count}) as i) as seed`;
}
