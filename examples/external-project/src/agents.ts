// The code agents of this project. The planner serves them when DURA_AGENTS names this file.
import { z } from 'zod';
import { defineAgent } from '@dura/code-agents';

const Order = z.object({
  customer: z.string().min(1),
  lines: z.array(z.object({ sku: z.string(), cents: z.number().int().positive() })).min(1),
});

/** Totals an order, charges it once through billing.charge, and returns the invoice. */
export const invoice = defineAgent({
  name: 'invoice',
  version: '1',
  input: Order,
  tools: ['billing.charge'],
  async run(ctx, order) {
    const total = order.lines.reduce((sum, line) => sum + line.cents, 0);
    const receipt = await ctx.tool('billing.charge', { customer: order.customer, amount: total });
    // Ids and time come from ctx: recorded once, the same on every replay.
    return {
      invoiceId: ctx.uuid(),
      issuedAt: ctx.now().toISOString(),
      customer: order.customer,
      total,
      receipt,
    };
  },
});
