import { createHash } from 'node:crypto';
import * as z from 'zod';
import { formatIssues, TenantSchema } from '@dura/contracts';
import { ALL_TENANTS, SCOPES, type Caller, type Scope } from './caller';

const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/i, 'sha256 must be 64 hex digits (e.g. `printf %s "$TOKEN" | sha256sum`)');

const TokenEntrySchema = z
  .object({
    name: z.string().min(1).max(100),
    token: z.string().min(16, 'a token must have at least 16 characters').optional(),
    sha256: Sha256Hex.optional(),
    tenant: z.union([z.literal(ALL_TENANTS), TenantSchema]),
    scopes: z.array(z.enum(SCOPES)).min(1),
  })
  .strict()
  .refine((entry) => (entry.token === undefined) !== (entry.sha256 === undefined), {
    message: 'give exactly one of "token" and "sha256"',
  });

/** The tokens file: a JSON array of entries (see PROJECTOR_API_TOKENS_FILE). */
export const TokenFileSchema = z.array(TokenEntrySchema).min(1, 'the tokens file lists no token');
export type TokenEntry = z.infer<typeof TokenEntrySchema>;

export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The callers of a tokens file by the SHA-256 of their token. Looking a presented token up by its hash means
 * the file may hold hashes only, and no comparison ever runs over the secret itself.
 */
export function parseTokenFile(text: string, source: string): Map<string, Caller> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source} is not valid JSON (${(err as Error).message}); it must be an array of tokens`);
  }
  const parsed = TokenFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${source} does not list API tokens correctly: ${formatIssues(parsed.error).join('; ')}`);
  const table = new Map<string, Caller>();
  for (const entry of parsed.data) {
    const hash = (entry.sha256 ?? sha256Hex(entry.token ?? '')).toLowerCase();
    if (table.has(hash))
      throw new Error(`${source}: token "${entry.name}" is listed twice; give each its own`);
    table.set(hash, {
      name: entry.name,
      tenant: entry.tenant,
      scopes: new Set<Scope>(entry.scopes),
      kind: 'token',
    });
  }
  return table;
}
