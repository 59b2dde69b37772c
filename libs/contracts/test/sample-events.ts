import type { EventData, EventMeta, EventType } from '../src/index';

const error = { code: 'http_503', message: 'service unavailable', retryable: true };
const request = {
  v: 1 as const,
  agent: { kind: 'scripted' as const, steps: [{ tool: 'http.request', args: { url: 'https://x' } }] },
};

/** One valid `data` of the current version per event type; a new event type fails to compile until it has one. */
export const SAMPLE_DATA: { [T in EventType]: EventData<T> } = {
  run_requested: {
    request: {
      ...request,
      runId: 'run-1',
      input: { ticket: 'OPS-1' },
      tags: ['nightly'],
      metadata: { team: 'web' },
    },
  },
  run_started: {},
  run_rejected: {
    error: { code: 'contract_violation', message: 'bad request' },
    issues: ['v: Invalid input: expected 1'],
  },
  thought: {
    step: 0,
    model: { id: 'gpt-x', promptVersion: 'p-3' },
    content: 'calling http',
    decision: {
      kind: 'tool_calls',
      calls: [{ callId: 'call-1', tool: 'http.request', args: { url: 'https://x' } }],
    },
    usage: { inputTokens: 120, outputTokens: 30 },
    finishReason: 'tool_calls',
  },
  budget_reserved: { tokens: 4096, costUsd: 0.02 },
  context_summarized: {
    throughStep: 3,
    summary: 'fetched the page and found the price',
    model: { id: 'gpt-x', promptVersion: 'p-3' },
    usage: { inputTokens: 900, outputTokens: 80 },
  },
  tool_call_requested: {
    callId: 'call-1',
    step: 1,
    tool: 'http.request',
    args: { url: 'https://x' },
    idempotencyKey: 'k',
  },
  tool_call_completed: {
    callId: 'call-1',
    idempotencyKey: 'k',
    result: { status: 200 },
    attempt: 1,
    deduped: false,
    durationMs: 81,
  },
  tool_call_failed: { callId: 'call-1', idempotencyKey: 'k', error, attempt: 1, retryable: true },
  wait_requested: { waitId: 'w-1', kind: 'signal', signal: 'approve' },
  signal_received: { signalId: 's-1', name: 'approve', payload: { by: 'ana' } },
  timer_fired: { waitId: 'w-2' },
  child_run_requested: { childRunId: 'run-1-child', request },
  child_run_completed: { childRunId: 'run-1-child', status: 'completed', output: [1, 2] },
  snapshot_taken: { atSeq: 41 },
  budget_exceeded: { budget: 'tokens', limit: 1000, used: 1200 },
  run_completed: { output: { url: 'https://staging.acme.dev' } },
  run_failed: { error },
  run_cancelled: { reason: 'cancelled by ana' },
};

export function sampleMeta(overrides: Partial<EventMeta> = {}): EventMeta {
  return {
    id: 'evt-1',
    runId: 'run-1',
    ts: '2025-03-01T10:00:00.000Z',
    causationId: 'evt-0',
    correlationId: 'run-1',
    trace: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    ...overrides,
  };
}
