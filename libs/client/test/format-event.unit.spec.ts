import { describe, expect, it } from 'vitest';
import { decodeEvent, newEvent, type EventData } from '@dura/contracts';
import { formatEvent } from '../src/index';

const sha256 = 'ab'.repeat(32);

/** A stored `tool_call_completed` at `seq`, as a reader decodes it. */
function completedAt(seq: number, data: Partial<EventData<'tool_call_completed'>>) {
  const full = {
    callId: 'call-1',
    idempotencyKey: 'k-1',
    result: null,
    attempt: 1,
    deduped: false,
    durationMs: 1,
  };
  const meta = { id: `e-${seq}`, runId: 'run-1', ts: '2026-01-01T00:00:00.000Z', correlationId: 'run-1' };
  return decodeEvent(newEvent('tool_call_completed', { ...full, ...data }, meta), seq);
}

describe('formatEvent', () => {
  it('shows a result kept in the object store by its hash and size, not as null', () => {
    const event = completedAt(5, {
      resultRef: { uri: `dura-obj://dura_payloads/${sha256}`, sha256, size: 70_000 },
      durationMs: 3,
    });
    expect(formatEvent(event)).toBe(
      '#   5  tool_call_completed  call-1 -> object store sha256:abababababab… (70000 bytes) (3 ms)',
    );
  });

  it('shows an inline result as JSON', () => {
    const event = completedAt(6, { callId: 'call-2', result: { ok: true } });
    expect(formatEvent(event)).toBe('#   6  tool_call_completed  call-2 -> {"ok":true} (1 ms)');
  });
});
