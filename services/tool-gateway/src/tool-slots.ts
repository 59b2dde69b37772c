import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@dura/db';
import type { Logger } from '@dura/service-kit';

/** A slot held for one call; `release` gives it back (idempotent). */
export interface HeldSlot {
  slot: number;
  release(): Promise<void>;
}

export interface ToolSlotsOptions {
  db: Db;
  log: Logger;
  /** A held slot's lease, renewed every third of it while the call runs; a dead gateway's slot frees after it. */
  leaseMs?: number;
}

export const DEFAULT_SLOT_LEASE_MS = 15_000;

/**
 * Per-tool concurrency across every gateway replica: a tool limited to N has N rows in `tool_slots`, and a
 * call runs only while it holds one. A slot is claimed with `FOR UPDATE SKIP LOCKED` (replicas never wait
 * on each other's locks) and held as a lease on Postgres's clock, renewed while the call runs: a gateway
 * killed mid-call loses no slot for longer than one lease.
 */
export function createToolSlots(options: ToolSlotsOptions) {
  const { db, log } = options;
  const leaseMs = options.leaseMs ?? DEFAULT_SLOT_LEASE_MS;
  const instance = randomUUID();
  const seeded = new Set<string>();

  async function seed(tool: string, limit: number): Promise<void> {
    const id = `${tool}\0${limit}`;
    if (seeded.has(id)) return;
    await db.execute(sql`
      insert into tool_slots (tool, slot)
      select ${tool}, g from generate_series(0, ${limit - 1}::int) as g
      on conflict do nothing`);
    seeded.add(id);
  }

  /** Claims a free slot of `tool` (slots numbered below `limit`) for `key`; undefined when all are held. */
  async function tryAcquire(tool: string, limit: number, key: string): Promise<HeldSlot | undefined> {
    await seed(tool, limit);
    const holder = `${instance}/${key}`;
    const [row] = rowsOf<{ slot: number }>(
      await db.execute(sql`
        with free as (
          select tool, slot from tool_slots
          where tool = ${tool} and slot < ${limit}::int and (holder is null or lease_until < now())
          order by slot
          limit 1
          for update skip locked
        )
        update tool_slots t
        set holder = ${holder}, lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
        from free
        where t.tool = free.tool and t.slot = free.slot
        returning t.slot`),
    );
    if (!row) return undefined;
    const slot = Number(row.slot);
    const renewal = setInterval(
      () => {
        db.execute(
          sql`
        update tool_slots set lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
        where tool = ${tool} and slot = ${slot}::int and holder = ${holder}
        returning slot`,
        ).then(
          (result) => {
            if (rowsOf(result).length === 0)
              log.warn('a tool slot lease ran out while its call was running', { tool, slot, key });
          },
          (err: unknown) => log.warn('renewing a tool slot lease failed', { tool, slot, key, err }),
        );
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    renewal.unref();
    let released: Promise<void> | undefined;
    return {
      slot,
      release() {
        clearInterval(renewal);
        released ??= db
          .execute(
            sql`update tool_slots set holder = null, lease_until = null
                where tool = ${tool} and slot = ${slot}::int and holder = ${holder}`,
          )
          .then(
            () => undefined,
            (err: unknown) => {
              // The lease still runs out on its own; the slot is back within one lease.
              log.warn('releasing a tool slot failed; it frees when its lease runs out', { tool, slot, err });
            },
          );
        return released;
      },
    };
  }

  /**
   * Waits up to `waitMs` for a slot, polling with a growing, jittered pause (so waiters on several replicas
   * do not poll in step). Undefined when none came free in time: the caller retries the call later.
   */
  async function acquire(
    tool: string,
    limit: number,
    key: string,
    waitMs: number,
  ): Promise<HeldSlot | undefined> {
    const deadline = Date.now() + waitMs;
    let pause = 25;
    for (;;) {
      const held = await tryAcquire(tool, limit, key);
      if (held) return held;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, pause * (0.5 + Math.random()))));
      pause = Math.min(500, pause * 2);
    }
  }

  return { acquire, tryAcquire, leaseMs };
}

export type ToolSlots = ReturnType<typeof createToolSlots>;

/**
 * Per-tool limits from `GATEWAY_TOOL_CONCURRENCY` (`tool=N,other=M`); they win over a tool's `concurrency`.
 * Throws on a malformed entry, naming it.
 */
export function parseToolConcurrency(text: string | undefined): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const entry of (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([^=\s]+)\s*=\s*(\d+)$/.exec(entry);
    const limit = match ? Number(match[2]) : NaN;
    if (!match || !Number.isSafeInteger(limit) || limit < 1)
      throw new Error(`"${entry}" is not <tool>=<positive integer> (e.g. pay.charge=2)`);
    limits[match[1]!] = limit;
  }
  return limits;
}
