import * as z from 'zod';
import { JsonObjectSchema } from './ids';

/** A tool call as a model asked for it: `name` is the Dura tool name (adapters map it to the provider's). */
export const ChatToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: JsonObjectSchema,
});
export type ChatToolCall = z.infer<typeof ChatToolCallSchema>;

/** One message of a model conversation, provider-neutral. Adapters translate it to each provider's API. */
export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().optional(),
    toolCalls: z.array(ChatToolCallSchema).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string().min(1),
    name: z.string().min(1),
    content: z.string(),
    isError: z.boolean().optional(),
  }),
]);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/**
 * A model call's input, recorded content-addressed: `prefix` is the `hash` of the previous call's input (null
 * for the first), `messages` only what is new since then, and `hash` = sha256 over `prefix` and the new
 * messages' canonical JSON. The conversation of a 100-call run is therefore stored once, not 100 times.
 */
export const PromptRecordSchema = z.object({
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  prefix: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  messages: z.array(ChatMessageSchema),
});
export type PromptRecord = z.infer<typeof PromptRecordSchema>;
