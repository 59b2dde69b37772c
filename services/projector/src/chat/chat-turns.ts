import { and, eq, like } from 'drizzle-orm';
import { DEFAULT_TENANT } from '@dura/contracts';
import type { Db } from '@dura/db';
import { ALL_TENANTS, type Caller } from '../auth/caller';
import { apiSubmissions } from '../db/schema';
import { tenantRunId } from '../tenant-ids';

/** What a chat id may be: it names the chat's turn runs (`chat-<id>-<n>`). */
export const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The tenant a caller's chats live in: its own; an operator's (tenant `*`) in `default`. */
export function chatTenant(caller: Caller): string {
  return caller.tenant === ALL_TENANTS ? DEFAULT_TENANT : caller.tenant;
}

/** The key of turn `n` of a chat, and the run id it names in `tenant`'s namespace. */
export function turnKey(chatId: string, n: number): string {
  return `chat-${chatId}-${n}`;
}

export function turnRunId(tenant: string, chatId: string, n: number): string {
  return tenantRunId(tenant, turnKey(chatId, n), 'the chat id');
}

/**
 * The run ids of the chat's turns, in order. Each turn is submitted through the API before anything else
 * happens to it, so the API's submissions (written before the run is published) know every turn at once,
 * a turn the planner has not taken up yet included.
 */
export async function listTurns(db: Db, tenant: string, chatId: string): Promise<string[]> {
  const prefix = turnRunId(tenant, chatId, 0).slice(0, -1);
  const rows = await db
    .select({ runId: apiSubmissions.runId })
    .from(apiSubmissions)
    .where(and(eq(apiSubmissions.tenant, tenant), like(apiSubmissions.runId, `${escapeLike(prefix)}%`)));
  const numbered = rows
    .map((row) => ({ runId: row.runId, n: Number(row.runId.slice(prefix.length)) }))
    .filter((t) => Number.isSafeInteger(t.n) && `${t.n}` === t.runId.slice(prefix.length))
    .sort((a, b) => a.n - b.n);
  // Turns are 0, 1, 2, …: a number past a missing one is not this chat's (it cannot be submitted here).
  const turns: string[] = [];
  for (const t of numbered) if (t.n === turns.length) turns.push(t.runId);
  return turns;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
