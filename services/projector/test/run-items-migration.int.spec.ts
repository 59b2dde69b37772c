import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { fold } from '@dura/core';
import { RunLog } from '@dura/core/testing';
import { openDatabase, type DbHandle } from '@dura/db';
import { migrateProjector, PROJECTOR_MIGRATIONS, readStoredState, runs, summarize } from '../src/index';
import { asJson } from './support';

const MIGRATIONS_TABLE = '__dura_projector_migrations';

/** The projector's migrations before `run_items` (0000–0004), in a folder of their own. */
function migrationsBeforeRunItems(): string {
  const folder = mkdtempSync(join(tmpdir(), 'dura-projector-migrations-'));
  cpSync(PROJECTOR_MIGRATIONS, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
  writeFileSync(
    journalFile,
    JSON.stringify({ ...journal, entries: journal.entries.filter((e) => e.idx < 5) }),
  );
  return folder;
}

let handle: DbHandle | undefined;
let folder: string | undefined;
afterAll(async () => {
  await handle?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('migration 0005 (run_items)', () => {
  it('given states stored whole: moves their lists and request out, and the state put back together is the same', async () => {
    handle = await openDatabase({});
    folder = migrationsBeforeRunItems();
    await handle.migrate({ folder, table: MIGRATIONS_TABLE });
    const log = new RunLog('run-old')
      .request([
        { tool: 'echo', args: { n: 1 } },
        { tool: 'echo', args: { n: 2 } },
      ])
      .start()
      .think([{ tool: 'echo', args: { n: 1 } }])
      .intents()
      .complete('call-1', { n: 1 })
      .think([{ tool: 'echo', args: { n: 2 } }])
      .intents();
    const state = fold(log.events);
    // As the projector wrote a run before 0005: the whole state in one column (whose row has no request yet).
    const c = summarize('run-old', state);
    await handle.db.execute(sql`
      insert into runs (run_id, tenant, status, state, last_seq, event_count, steps, pending_calls, input_tokens,
                        output_tokens, tags, metadata, tools, created_at, updated_at)
      values (${c.runId}, ${c.tenant}, ${c.status}, ${JSON.stringify(state)}::jsonb, ${c.lastSeq}, ${c.eventCount},
              ${c.steps}, ${c.pendingCalls}, 0, 0, '{}', '{}'::jsonb, '{echo}', ${c.createdAt}, ${c.updatedAt})`);

    await migrateProjector(handle);

    expect(await readStoredState(handle.db, 'run-old')).toEqual(asJson(state));
    const [row] = await handle.db
      .select({ keys: sql<string[]>`array(select jsonb_object_keys(${runs.state}))`, request: runs.request })
      .from(runs)
      .where(eq(runs.runId, 'run-old'));
    for (const key of ['calls', 'turns', 'signals', 'request']) expect(row?.keys).not.toContain(key);
    expect(row?.keys).toContain('status');
    expect(row?.request).toEqual(asJson(state.request));
  });
});
