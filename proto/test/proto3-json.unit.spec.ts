import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  EventDataSchemas,
  RunRequestSchema,
  SignalRequestSchema,
  TimerTaskSchema,
  formatIssues,
} from '@dura/contracts';

// Byte-for-byte what a proto3 JSON serializer writes for messages built from proto/dura/v1:
// protoc 3.21 Python classes, `json_format.MessageToJson(msg, including_default_value_fields=True)`
// (protobuf >= 5.26: `always_print_fields_with_no_presence=True`; Go: protojson `EmitDefaultValues`).
// Note `3.0` and `5000000000.0`: proto3 JSON writes doubles and Struct numbers that way. Note also the
// fields of other union variants (`"steps": []` beside `"kind": "agent"`, `"toolCallId": ""` in a system
// message): emitting default values writes them, and zod's variant objects drop keys they do not know.
const WRITTEN_BY_PROTO3 = {
  runRequest: [
    RunRequestSchema,
    '{"v": 1, "runId": "run-42", "agent": {"kind": "scripted", "steps": [{"tool": "http.request", "args": {"url": "https://example.com", "retries": 3.0}}]}, "input": {"name": "demo"}, "tags": ["nightly"], "metadata": {"team": "payments"}}',
  ],
  runRequestWithoutSteps: [
    RunRequestSchema,
    '{"v": 1, "runId": "run-43", "agent": {"kind": "scripted", "steps": []}, "tags": [], "metadata": {}}',
  ],
  signalRequest: [
    SignalRequestSchema,
    '{"v": 1, "runId": "run-42", "signalId": "sig-1", "name": "approve", "payload": true}',
  ],
  thought: [
    EventDataSchemas.thought,
    '{"model": {"id": "scripted", "promptVersion": "v3"}, "decision": {"kind": "tool_calls", "calls": [{"callId": "c1", "tool": "http.request", "args": {"url": "https://example.com"}}]}, "usage": {"outputTokens": 12, "inputTokens": 0}, "finishReason": "tool_calls", "step": 0}',
  ],
  toolCallCompleted: [
    EventDataSchemas.tool_call_completed,
    '{"callId": "c1", "idempotencyKey": "k1", "result": null, "attempt": 1, "durationMs": 12.5, "deduped": false}',
  ],
  snapshotTaken: [EventDataSchemas.snapshot_taken, '{"atSeq": 5000000000.0}'],
  agentRunRequest: [
    RunRequestSchema,
    '{"v": 1, "runId": "run-44", "agent": {"kind": "agent", "name": "support.triage", "steps": []}, "budget": {"maxSteps": 20, "maxCostUsd": 0.5}, "parent": {"runId": "run-42", "callId": "c7"}, "tags": [], "metadata": {}, "tenant": "acme"}',
  ],
  thoughtWithPrompt: [
    EventDataSchemas.thought,
    '{"step": 1, "model": {"id": "gpt-test", "promptVersion": "v1"}, "decision": {"kind": "tool_calls", "calls": [{"callId": "c2", "tool": "http.request", "args": {}, "argsRef": {"uri": "dura-obj://dura-payloads/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "size": 70000.0}, "approval": {"timeoutSeconds": 3600.0, "onTimeout": "reject"}}]}, "usage": {"inputTokens": 120, "outputTokens": 30}, "finishReason": "tool_calls", "prompt": {"hash": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "prefix": null, "messages": [{"role": "system", "content": "You triage tickets.", "toolCalls": [], "toolCallId": "", "name": ""}, {"role": "user", "content": "Ticket 12", "toolCalls": [], "toolCallId": "", "name": ""}, {"role": "assistant", "toolCalls": [{"id": "c1", "name": "http.request", "arguments": {"url": "https://example.com"}}], "toolCallId": "", "name": ""}, {"role": "tool", "content": "200 OK", "toolCallId": "c1", "name": "http.request", "toolCalls": []}]}, "costUsd": 0.0021}',
  ],
  approvalWait: [
    EventDataSchemas.wait_requested,
    '{"waitId": "w1", "kind": "approval", "callId": "c2", "timeoutAt": "2025-01-01T10:00:00Z", "onTimeout": "reject"}',
  ],
  timerTask: [
    TimerTaskSchema,
    '{"v": 1, "runId": "run-42", "waitId": "w2", "dueAt": "2025-01-01T10:00:00+00:00", "causationId": "e1", "correlationId": "run-42"}',
  ],
  budgetReserved: [EventDataSchemas.budget_reserved, '{"tokens": 4096, "costUsd": 0.0}'],
  runStartedEmpty: [EventDataSchemas.run_started, '{}'],
} satisfies Record<string, [z.ZodType, string]>;

describe('JSON written by a proto3 client', () => {
  it.each(Object.entries(WRITTEN_BY_PROTO3))('%s passes the zod schema', (_name, [schema, json]) => {
    const parsed = schema.safeParse(JSON.parse(json));
    expect(parsed.success ? [] : formatIssues(parsed.error)).toEqual([]);
  });

  it('needs default values emitted: by default proto3 JSON drops empty required fields', () => {
    const withoutDefaults = '{"v": 1, "runId": "run-43", "agent": {"kind": "scripted"}}';
    const parsed = RunRequestSchema.safeParse(JSON.parse(withoutDefaults));
    expect(parsed.success ? [] : formatIssues(parsed.error)).toEqual([
      'agent.steps: Invalid input: expected array, received undefined',
    ]);
  });
});
