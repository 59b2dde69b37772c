import { SecretEnvelopeSchema } from '@dura/contracts';

/**
 * The schema of an input field a code agent declares secret: the code gets the value sealed, never in
 * clear, so nothing it records (a tool's other arguments, a model prompt, its output) can hold the secret.
 * Pass it on as it is to a tool field that tool declares secret; the gateway opens it right before the tool
 * runs.
 *
 * @example
 * defineAgent({
 *   name: 'pay', version: '1', tools: ['pay.card'],
 *   input: z.object({ amount: z.number(), card: z.object({ token: sealedSecret }) }),
 *   secrets: { input: ['card.token'] },
 *   run: (ctx, input) => ctx.tool('pay.card', { amount: input.amount, card: input.card }),
 * });
 */
export const sealedSecret = SecretEnvelopeSchema;
