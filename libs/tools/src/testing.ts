// Test helpers of @dura/tools (the `./testing` entry; not part of the SDK's tarball).
import * as z from 'zod';
import { defineTool } from './tool';

/** `pay`: charges a card whose `card.token` argument is declared secret; answers `{ ok: true }`. */
export function secretCardTool() {
  return defineTool({
    name: 'pay',
    description: 'charges a card',
    input: z.object({ amount: z.number(), card: z.object({ token: z.string() }) }),
    safety: 'idempotent',
    secrets: { args: ['card.token'] },
    execute: () => Promise.resolve({ ok: true }),
  });
}
