import type { ToolTask } from '@dura/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '@dura/db';
import type { Logger } from '@dura/service-kit';
import { mayRunAgain, type ToolRegistry } from '@dura/tools';
import { effects } from './db/schema';
import type { Relay } from './relay';

/**
 * A call handed back at the drain deadline keeps its `started` row, and another replica would wait out
 * the lease before reconciling it. An idempotent tool may run again under the same key, so its lease ends
 * now; an unsafe one keeps its lease, which outlasts this process, so no second attempt overlaps it.
 */
export async function releaseLeases(
  parts: { db: Db; tools: ToolRegistry; clock: () => Date; log: Logger },
  handedBack: readonly ToolTask[],
): Promise<void> {
  const { db, tools, clock, log } = parts;
  const keys = handedBack.flatMap((task) => {
    const tool = tools.get(task.tool);
    return tool && mayRunAgain(tool.safety) ? [task.idempotencyKey] : [];
  });
  if (keys.length === 0) return;
  try {
    await db
      .update(effects)
      .set({ leaseUntil: clock() })
      .where(and(inArray(effects.idempotencyKey, keys), eq(effects.status, 'started')));
    log.info('released the leases of handed-back idempotent calls', { keys });
  } catch (err) {
    log.warn('releasing the leases of handed-back calls failed; they are reconciled after the lease', {
      keys,
      err,
    });
  }
}

/** Publishes what the outbox still holds (for runs no other relay holds) until it is empty or the deadline. */
export async function flushOutbox(relay: Relay, log: Logger, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()));
  });
  try {
    for (;;) {
      const sent = await Promise.race([relay.relayOnce(), expired]);
      if (sent === 'expired') {
        log.warn('outbox not flushed by the drain deadline; another replica relays the rest');
        return;
      }
      if (sent === 0) return;
    }
  } catch (err) {
    log.warn('flushing the outbox failed; another replica relays the rest', { err });
  } finally {
    clearTimeout(timer);
  }
}
