// The tools of this project. The tool gateway runs them, and the planner checks calls against them, when
// DURA_TOOLS_MODULES names this file.
import { z } from 'zod';
import type { JsonValue } from '@dura/contracts';
import { defineTool, ToolError } from '@dura/tools';

const ChargeArgs = z.object({
  customer: z.string().min(1),
  /** In cents. */
  amount: z.number().int().positive(),
});

function billingUrl(): string {
  const url = process.env['BILLING_URL'];
  if (!url) throw new ToolError('billing_unset', 'set BILLING_URL to the billing API', { retryable: false });
  return url;
}

/** Charges once per call: the idempotency key goes to the billing API, which answers a repeat from its record. */
export const charge = defineTool({
  name: 'billing.charge',
  description: 'Charge a customer an amount in cents through the billing API.',
  input: ChargeArgs,
  safety: 'idempotent',
  timeoutMs: 10_000,
  async execute({ customer, amount }, { idempotencyKey, signal }) {
    const res = await fetch(`${billingUrl()}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ customer, amount }),
      signal,
    });
    const body = (await res.json()) as JsonValue;
    if (res.ok) return body;
    // A refusal (4xx) is final; the gateway tries a server error (5xx) again under the same key.
    throw new ToolError(`billing_${res.status}`, `the billing API answered ${res.status}`, {
      retryable: res.status >= 500,
    });
  },
});
