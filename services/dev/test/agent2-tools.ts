// A tool for the agent fault tests whose result is long text: each call charges once through the payment
// witness (so a test can prove one effect per idempotency key) and returns a few hundred characters about
// its part, enough for a small context window to fill up after a few steps. Loaded beside the witness tools
// with DURA_TOOLS_MODULES (see scripted-llm.ts).
import * as z from 'zod';
import type { JsonValue } from '@dura/contracts';
import { defineTool, ToolError } from '@dura/tools';

export const REPORT_TEXT_CHARS = 600;

/** The text of part `part`: deterministic, and different for every part. */
export function reportText(part: number): string {
  let text = `Part ${part} of the quarterly report. `;
  for (let i = 1; text.length < REPORT_TEXT_CHARS; i += 1)
    text += `Line ${part}.${i}: figure ${(part * 7919 + i * 104_729) % 100_003}. `;
  return text.slice(0, REPORT_TEXT_CHARS);
}

export const reportFetch = defineTool({
  name: 'report.fetch',
  description: 'Fetch one part of the quarterly report (charges a fee once per call).',
  input: z.object({ part: z.number().int().positive() }),
  safety: 'idempotent',
  timeoutMs: 3_000,
  execute: async ({ part }, { idempotencyKey, signal }) => {
    const url = process.env['WITNESS_URL'];
    if (!url) throw new ToolError('witness_unset', 'WITNESS_URL is not set', { retryable: false });
    const res = await fetch(`${url}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ amount: part * 10 }),
      signal,
    });
    const charge = (await res.json()) as JsonValue;
    if (!res.ok)
      throw new ToolError(`charge_${res.status}`, `the witness answered ${res.status}`, {
        retryable: res.status >= 500,
      });
    return { charge, text: reportText(part) };
  },
});
