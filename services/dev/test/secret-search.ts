// Where the secrets-at-rest test looks for a secret: every byte a deployment keeps (the NATS store files, a
// pg_dump of the database) and every byte it emits (logs, spans), each as a named haystack.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface Haystack {
  where: string;
  bytes: Buffer;
}

/** Every file under `dir`, recursively, as raw bytes. */
export async function filesUnder(dir: string): Promise<Haystack[]> {
  const found: Haystack[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.push({ where: path, bytes: await readFile(path) });
  }
  return found;
}

/** A plain-text dump of one database, schema and data (`pg_dump`, as an operator would back it up). */
export async function pgDump(databaseUrl: string): Promise<Haystack> {
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', databaseUrl], {
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'buffer',
  });
  return { where: `pg_dump ${new URL(databaseUrl).pathname.slice(1)}`, bytes: stdout };
}

/**
 * The forms a secret can take in stored bytes: itself, and its base64 at each of the three alignments it
 * can have inside a longer base64 text (edge characters, which depend on neighbouring bytes, left out).
 */
export function secretForms(secret: string): string[] {
  const base64 = [0, 1, 2].map((shift) => {
    const text = Buffer.concat([Buffer.alloc(shift, 0x78), Buffer.from(secret)]).toString('base64');
    return text.slice(shift === 0 ? 0 : 4, -4);
  });
  return [secret, ...base64];
}

/** The haystacks holding any form of `secret`, as `where (form)`. */
export function placesOf(haystacks: readonly Haystack[], secret: string): string[] {
  return secretForms(secret).flatMap((form) =>
    haystacks.filter((h) => h.bytes.includes(form)).map((h) => `${h.where} (${form})`),
  );
}
