import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { DECLARATION_REFRESH_MS, declarationKey, declarationText, type ModelLimit } from '@dura/core';
import type { Logger } from '@dura/service-kit';
import { encoded, openFlowBucket } from './flow-store';

/**
 * The entry of one declaration: `d.<key>.<digest of the whole declaration>`. Replicas declaring the same
 * limit write the same entry; a replica declaring other figures writes one of its own, which operators see
 * as a warning (`GET /flow/limits`).
 */
export function declarationEntry(limit: ModelLimit): string {
  const digest = createHash('sha256').update(declarationText(limit)).digest('base64url').slice(0, 22);
  return `d.${encoded(declarationKey(limit))}.${digest}`;
}

/**
 * Writes this replica's declared limits into `dura_flow` now and every `DECLARATION_REFRESH_MS`, with the time
 * it did, so readers tell a declaration in force from one a stopped or reconfigured replica left. A failed
 * write is logged and tried again at the next refresh: it only hides the declaration from the view, never
 * changes admission.
 */
export function startDeclaring(deps: {
  js: JetStreamClient;
  limits: readonly ModelLimit[];
  log: Logger;
  replicas?: number;
  clock?: () => number;
}): { stop(): void } {
  const clock = deps.clock ?? Date.now;
  const write = async (): Promise<void> => {
    try {
      const kv = await openFlowBucket(deps.js, deps.replicas);
      for (const limit of deps.limits)
        await kv.put(declarationEntry(limit), JSON.stringify({ limit, at: clock() }));
    } catch (err) {
      deps.log.warn('could not write the declared model limits to dura_flow; operators will not see them', {
        err: (err as Error).message,
      });
    }
  };
  if (deps.limits.length === 0) return { stop: () => undefined };
  void write();
  const timer = setInterval(() => void write(), DECLARATION_REFRESH_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
