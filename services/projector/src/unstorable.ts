import { ContractViolation, unstorableTextIssue, unstorableTextPath, type RunEvent } from '@dura/contracts';

const ESCAPES = ['\\u0000', '\\ud', '\\uD'];

/**
 * Refuses an event holding text Postgres cannot store (U+0000 or a lone surrogate): written into the batch,
 * it would fail the whole transaction on every retry and stop the projection for every run. JSON can only
 * carry such text as an escape, so the stored bytes are scanned for one first and the event walked only then.
 */
export function checkStorable(msg: { seq: number; data: Uint8Array }, event: RunEvent): void {
  const bytes = Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength);
  if (!ESCAPES.some((escape) => bytes.includes(escape))) return;
  const path = unstorableTextPath(event);
  if (path === undefined) return;
  throw new ContractViolation(
    `event at seq ${msg.seq} (${event.type}) holds text the read model cannot store`,
    [unstorableTextIssue(path)],
  );
}
