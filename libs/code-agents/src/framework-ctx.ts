import { DuraError } from '@dura/contracts';
import type { Ctx } from './ctx';

/**
 * `ctx` when it is a code agent's context; otherwise an error saying so. Nothing made from something else
 * may look durable: a model or tool built outside a Dura execution would run in-process, unrecorded.
 */
export function frameworkCtx(ctx: unknown, who: string): Ctx {
  const candidate = ctx as Partial<Ctx> | null | undefined;
  if (
    candidate &&
    typeof candidate === 'object' &&
    typeof candidate.modelCall === 'function' &&
    typeof candidate.tool === 'function' &&
    typeof candidate.runId === 'string'
  )
    return candidate as Ctx;
  throw new DuraError(
    'not_in_execution',
    `${who} needs the ctx of a Dura code agent (the first argument of its run), got ${describe(ctx)}: ` +
      'outside a Dura execution nothing would be recorded, so nothing runs. Call it inside ' +
      'defineAgent({ run: async (ctx) => ... }) with that ctx.',
  );
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return typeof value === 'object' ? 'an object that is not one' : `a ${typeof value}`;
}
