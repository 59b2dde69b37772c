import * as z from 'zod';
import { formatIssues } from '@dura/contracts';
import type { ModelLimit } from '@dura/core';

const perMinute = z.number().int().positive();

/** One declared limit: a `provider/model`, optionally a tenant (`*`: each its own), and at least one rate or cap. */
export const ModelLimitSchema = z
  .strictObject({
    model: z.string().regex(/^[a-z0-9_-]+\/\S+$/, 'expected "provider/model", e.g. "openai/gpt-4o-mini"'),
    tenant: z
      .string()
      .regex(/^(\*|[A-Za-z0-9_-]{1,64})$/, 'expected a tenant name or "*"')
      .optional(),
    requestsPerMinute: perMinute.optional(),
    inputTokensPerMinute: perMinute.optional(),
    outputTokensPerMinute: perMinute.optional(),
    concurrentCalls: perMinute.optional(),
    burstSeconds: z.number().int().min(1).max(60).optional(),
    headroomSeconds: z.number().min(0).max(30).optional(),
    weights: z
      .record(
        z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a tenant name'),
        z.number().positive().max(1_000),
      )
      .optional(),
  })
  .refine(
    (limit) =>
      limit.requestsPerMinute !== undefined ||
      limit.inputTokensPerMinute !== undefined ||
      limit.outputTokensPerMinute !== undefined ||
      limit.concurrentCalls !== undefined,
    'a limit declares at least one of requestsPerMinute, inputTokensPerMinute, outputTokensPerMinute, concurrentCalls',
  );

export const ModelLimitsSchema = z.array(ModelLimitSchema).max(1_000);

/** `DURA_MODEL_LIMITS` (JSON) as limits; an issue on `ctx` naming what is wrong, never a silent default. */
export function parseModelLimits(text: string | undefined, ctx: z.RefinementCtx): ModelLimit[] {
  if (text === undefined || text.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    ctx.addIssue({
      code: 'custom',
      message: `not JSON (${(err as Error).message}); expected a list of limits`,
    });
    return z.NEVER;
  }
  const parsed = ModelLimitsSchema.safeParse(json);
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: formatIssues(parsed.error).join('; ') });
    return z.NEVER;
  }
  const seen = new Set<string>();
  for (const limit of parsed.data) {
    const id = `${limit.model}@${limit.tenant ?? ''}`;
    if (seen.has(id)) {
      ctx.addIssue({
        code: 'custom',
        message: `${limit.model}${limit.tenant ? ` (tenant ${limit.tenant})` : ''} is declared twice; give it one entry`,
      });
      return z.NEVER;
    }
    seen.add(id);
  }
  return parsed.data.map(
    (limit) =>
      Object.fromEntries(Object.entries(limit).filter(([, v]) => v !== undefined)) as unknown as ModelLimit,
  );
}
