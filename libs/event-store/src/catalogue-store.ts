import type { JetStreamClient } from '@nats-io/jetstream';
import {
  BUCKETS,
  CatalogueAgentSchema,
  CatalogueToolSchema,
  formatIssues,
  type CatalogueAgent,
  type CatalogueTool,
} from '@dura/contracts';
import { readKvMessages } from './bucket-keys';
import { whileBucketSettles } from './bucket-settle';
import { kvBucketOpener, openOnce } from './kv-bucket';

/**
 * How long an entry of the catalogue lives unless written again: services announce theirs again well within
 * it (`CATALOGUE_REFRESH_MS`), so what no running service serves any more leaves the catalogue by itself.
 */
export const CATALOGUE_TTL_MS = 15 * 60_000;
export const CATALOGUE_REFRESH_MS = 5 * 60_000;

/** Opens (creating when missing) the `dura_catalogue` bucket. */
export const openCatalogueBucket = kvBucketOpener(BUCKETS.catalogue, {
  ttl: CATALOGUE_TTL_MS,
  description: 'Dura catalogue: agent.<name>.<version> and tool.<name> -> what running services serve',
});

/** One entry to announce: its key (`catalogueAgentKey`, `catalogueToolKey`) and its value. */
export interface CatalogueEntry {
  key: string;
  value: CatalogueAgent | CatalogueTool;
}

/** Writes a service's entries into the catalogue (each put refreshes the entry's time to live). */
export function createCatalogueWriter(deps: { js: JetStreamClient; replicas?: number }) {
  const open = openOnce(() => openCatalogueBucket(deps.js, deps.replicas));
  return {
    async put(entries: readonly CatalogueEntry[]): Promise<void> {
      const kv = await open();
      for (const { key, value } of entries)
        await whileBucketSettles(() => kv.put(key, JSON.stringify(value)));
    },
  };
}

/** The catalogue as read: its valid entries, and those skipped with what was wrong with each. */
export interface CatalogueContents {
  agents: CatalogueAgent[];
  tools: CatalogueTool[];
  skipped: { key: string; problem: string }[];
}

/**
 * Reads every entry of the catalogue, validating each: a bad one is skipped (and named in `skipped`), never
 * thrown. Keys are listed by stream info and read by message get, so a reader needs no consumer and no
 * right to create the bucket; while no service has created it yet, the catalogue is empty.
 */
export async function readCatalogue(js: JetStreamClient): Promise<CatalogueContents> {
  const contents: CatalogueContents = { agents: [], tools: [], skipped: [] };
  const read = await readKvMessages(js, BUCKETS.catalogue);
  if (!read) return contents;
  for (const { key, msg } of read) {
    const skip = (problem: string) => contents.skipped.push({ key, problem });
    let value: unknown;
    try {
      value = msg.json();
    } catch {
      skip('not JSON');
      continue;
    }
    if (key.startsWith('agent.')) {
      const parsed = CatalogueAgentSchema.safeParse(value);
      if (parsed.success) contents.agents.push(parsed.data);
      else skip(formatIssues(parsed.error).join('; '));
    } else if (key.startsWith('tool.')) {
      const parsed = CatalogueToolSchema.safeParse(value);
      if (parsed.success) contents.tools.push(parsed.data);
      else skip(formatIssues(parsed.error).join('; '));
    } else skip('a key outside agent.> and tool.>');
  }
  return contents;
}
