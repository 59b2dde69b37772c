import * as z from 'zod';
import {
  ChatToolCallSchema,
  CODE_JOURNAL_TAG,
  JsonValueSchema,
  PromptRecordSchema,
  UsageSchema,
} from '@dura/contracts';

/** A model answer as the journal records it (`ModelAnswer`): what the planner checks before recording one. */
export const ModelAnswerSchema = z.object({
  content: z.string(),
  toolCalls: z.array(ChatToolCallSchema).optional(),
  usage: UsageSchema,
  model: z.object({ id: z.string().min(1), promptVersion: z.string() }),
  finishReason: z.string(),
  costUsd: z.number().nonnegative().optional(),
  /** The answer in the calling framework's own shape (`ctx.modelCall`), given back to it on replay. */
  native: JsonValueSchema.optional(),
});

/**
 * What a step of a code agent computed besides its intents: model answers, times, random numbers and ids,
 * in the order the code asked for them. Carried in the step's `thought` (as `content`), so each value is in
 * the log before any intent that used it acts.
 */
export const JournalEntrySchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('now'), v: z.number() }),
  z.object({ k: z.literal('random'), v: z.number().min(0).lt(1) }),
  z.object({ k: z.literal('uuid'), v: z.string().min(1) }),
  /** A named point the code marked (`ctx.mark`): a framework's handoff, say. */
  z.object({ k: z.literal('mark'), v: z.string().min(1) }),
  z.object({
    k: z.literal('model'),
    /** Hash of the request's canonical JSON: a replay asking another question is non-determinism. */
    h: z.string().min(1),
    a: ModelAnswerSchema,
    /**
     * What the call sent, content-addressed as a JSON agent's prompt is: only the messages new since the
     * run's earlier call it continues (`prefix`), so a conversation is stored once. Absent in journals
     * recorded before prompts were.
     */
    p: PromptRecordSchema.optional(),
  }),
]);
export type JournalEntry = z.infer<typeof JournalEntrySchema>;

const JOURNAL_TAG = CODE_JOURNAL_TAG;
const JournalSchema = z.object({ journal: z.literal(JOURNAL_TAG), entries: z.array(JournalEntrySchema) });

/** The thought content that carries `entries`. */
export function encodeJournal(entries: readonly JournalEntry[]): string {
  return JSON.stringify({ journal: JOURNAL_TAG, entries });
}

/** The entries a recorded thought carries; none when it carries no journal (a step that only asked for calls). */
export function decodeJournal(content: string | undefined): JournalEntry[] {
  if (content === undefined || content === '') return [];
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return [];
  }
  const parsed = JournalSchema.safeParse(raw);
  return parsed.success ? parsed.data.entries : [];
}

/** Describes an entry in a non-determinism message. */
export function describeEntry(entry: JournalEntry): string {
  if (entry.k === 'model') return `ctx.model (request ${entry.h.slice(0, 12)})`;
  return entry.k === 'mark' ? `ctx.mark(${JSON.stringify(entry.v)})` : `ctx.${entry.k}()`;
}
