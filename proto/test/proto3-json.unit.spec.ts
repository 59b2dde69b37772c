import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { EventDataSchemas, RunRequestSchema, SignalRequestSchema, formatIssues } from '@dura/contracts';

// Byte-for-byte what a proto3 JSON serializer writes for messages built from proto/dura/v1:
// protoc 3.21 Python classes, `json_format.MessageToJson(msg, including_default_value_fields=True)`
// (protobuf >= 5.26: `always_print_fields_with_no_presence=True`; Go: protojson `EmitDefaultValues`).
// Note `3.0` and `5000000000.0`: proto3 JSON writes doubles and Struct numbers that way.
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
