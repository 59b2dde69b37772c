import { ContractViolation, unstorableTextIssue, unstorableTextPath, type RunEvent } from '@dura/contracts';

/** The start of every JSON `\u` escape: one search finds them all, and only those are looked at. */
const UNICODE_ESCAPE = Buffer.from('\\u');

/** Whether the JSON text holds `\u0000` or a `\uD...` escape (a surrogate, maybe a lone one). */
export function mayHoldUnstorable(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(UNICODE_ESCAPE); at >= 0; at = bytes.indexOf(UNICODE_ESCAPE, at + 2)) {
    const next = bytes[at + 2];
    if (next === 0x64 || next === 0x44) return true; // d, D
    if (next === 0x30 && bytes[at + 3] === 0x30 && bytes[at + 4] === 0x30 && bytes[at + 5] === 0x30)
      return true;
  }
  return false;
}

/**
 * Refuses an event holding text Postgres cannot store (U+0000 or a lone surrogate): written into the batch,
 * it would fail the whole transaction on every retry and stop the projection for every run. JSON can only
 * carry such text as an escape, so the stored bytes are scanned for one first and the event walked only then.
 */
export function checkStorable(msg: { seq: number; data: Uint8Array }, event: RunEvent): void {
  const bytes = Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength);
  if (!mayHoldUnstorable(bytes)) return;
  const path = unstorableTextPath(event);
  if (path === undefined) return;
  throw new ContractViolation(
    `event at seq ${msg.seq} (${event.type}) holds text the read model cannot store`,
    [unstorableTextIssue(path)],
  );
}
