import { describe, expect, it } from 'vitest';
import { decodeEvent, newEvent } from '@dura/contracts';
import { formatEvent } from '../src/index';

const sha256 = 'ab'.repeat(32);
const meta = { id: 'e-1', runId: 'run-1', ts: '2026-01-01T00:00:00.000Z', correlationId: 'run-1' };

describe('formatEvent', () => {
  it('shows a result kept in the object store by its hash and size, not as null', () => {
    const event = decodeEvent(
      newEvent(
        'tool_call_completed',
        {
          callId: 'call-1',
          idempotencyKey: 'k-1',
          result: null,
          resultRef: { uri: `dura-obj://dura_payloads/${sha256}`, sha256, size: 70_000 },
          attempt: 1,
          deduped: false,
          durationMs: 3,
        },
        meta,
      ),
      5,
    );
    expect(formatEvent(event)).toBe(
      '#   5  tool_call_completed  call-1 -> object store sha256:abababababab… (70000 bytes) (3 ms)',
    );
  });

  it('shows an inline result as JSON', () => {
    const event = decodeEvent(
      newEvent(
        'tool_call_completed',
        {
          callId: 'call-2',
          idempotencyKey: 'k-2',
          result: { ok: true },
          attempt: 1,
          deduped: false,
          durationMs: 1,
        },
        meta,
      ),
      6,
    );
    expect(formatEvent(event)).toBe('#   6  tool_call_completed  call-2 -> {"ok":true} (1 ms)');
  });
});
