// The faults of the nemesis soak, each injected while runs are in flight and healed before it returns:
// pause (SIGSTOP past the ack wait and the claim lease), slow (the model provider and the payment API hang,
// answer after the caller gave up, fail in bursts), clock (a service's wall clock jumps minutes forward and
// back), disk (the broker's store fills up, then is freed), stall (the broker's disk stops answering: every
// write waits, then goes through), pgdisk and pgstall (the same to Postgres's disk), netsplit (a planner, a
// gateway and the worker cut off from NATS, their connections open and silent, then healed).
import { setTimeout as sleep } from 'node:timers/promises';
import { pauseProcess, type ClockControl, type LimitedDisk } from '@dura/testing';
import type { Cluster } from './cluster';
import type { ServiceName } from './supervisor';

export const NEMESES = ['pause', 'slow', 'clock', 'disk', 'stall', 'pgdisk', 'pgstall', 'netsplit'] as const;
export type NemesisName = (typeof NEMESES)[number];

/** The nemeses that fill or freeze a disk: they run on loop mounts, which need root (or CAP_SYS_ADMIN). */
export const DISK_NEMESES: ReadonlySet<NemesisName> = new Set(['disk', 'stall', 'pgdisk', 'pgstall']);

/** The fake model provider's mood, set by the slow nemesis. */
export interface ModelFaults {
  /** Requests still to answer with a 503. */
  failNext: number;
  /** Every answer held back this long (past the agent's 1.5 s attempt limit when > 1500). */
  lateMs: number;
}

export interface NemesisContext {
  cluster: Cluster;
  /** The wall clock of the replicas started on it (see `CLOCKED`). */
  clock: ClockControl;
  /** The small mount the nats-server stores JetStream on: mounted when a disk nemesis runs. */
  disk?: LimitedDisk;
  /** The small mount Postgres keeps its cluster on: mounted when a disk nemesis runs. */
  pgDisk?: LimitedDisk;
  model: ModelFaults;
  say(line: string): void;
}

/** Replicas whose wall clock the clock nemesis moves: a planner, a gateway and the worker. */
export const CLOCKED = new Set(['planner-2', 'tool-gateway-2', 'worker-1']);

/** Replicas that reach NATS through a link the netsplit nemesis cuts: a planner, a gateway and the worker. */
export const PARTITIONED = ['planner-1', 'tool-gateway-1', 'worker-1'] as const;

/** Longer than the services' ack wait (3 s) and a witness call's lease (3 s timeout + 1 s margin). */
export const PAUSE_MS = 6_000;

/** The mount a disk nemesis works on; the soak mounts both when its list names any of them. */
function mounted(disk: LimitedDisk | undefined, which: string): LimitedDisk {
  if (!disk)
    throw new Error(`the ${which} nemesis needs the soak's mounts, made only when a disk nemesis is listed`);
  return disk;
}

function slotOf(cluster: Cluster, name: ServiceName, index: number) {
  const slots = cluster.slots.filter((slot) => slot.name === name && slot.current() !== undefined);
  return slots[index % Math.max(1, slots.length)];
}

/** Pauses a planner, a gateway and a worker together, twice; returns the pauses made. */
async function pause(ctx: NemesisContext): Promise<number> {
  let pauses = 0;
  for (let round = 0; round < 2; round += 1) {
    const victims = (['planner', 'tool-gateway', 'worker'] as const)
      .map((name) => slotOf(ctx.cluster, name, round))
      .flatMap((slot) => (slot?.current() ? [{ label: slot.label, pid: slot.current()!.pid }] : []));
    ctx.say(`SIGSTOP ${victims.map((v) => v.label).join(', ')} for ${PAUSE_MS} ms`);
    const paused = await Promise.all(victims.map((victim) => pauseProcess(victim.pid, PAUSE_MS)));
    pauses += paused.filter(Boolean).length;
    ctx.say('SIGCONT');
    await sleep(2_000);
  }
  return pauses;
}

/** The payment API and the model provider: late answers, then a burst of 5xx from each; returns the faults. */
async function slow(ctx: NemesisContext): Promise<number> {
  const { witness } = ctx.cluster;
  ctx.say('payment API and model answer 5 s late (callers time out at 3 s and 1.5 s)');
  const healLate = witness.misbehave({ lateMs: 5_000 });
  ctx.model.lateMs = 4_000;
  await sleep(6_000);
  healLate();
  ctx.model.lateMs = 0;
  ctx.say('payment API and model answer 503 to the next 6 requests each');
  const healBurst = witness.misbehave({ failNext: 6, status: 503 });
  ctx.model.failNext = 6;
  await sleep(4_000);
  healBurst();
  ctx.model.failNext = 0;
  return 4;
}

/** Steps the clocked replicas' wall clock 5 minutes forward, then 5 minutes back, then home; returns steps. */
async function clock(ctx: NemesisContext): Promise<number> {
  const steps = [300, -300, 0];
  for (const offset of steps) {
    ctx.say(`wall clock of ${[...CLOCKED].join(', ')} set to real time ${offset >= 0 ? '+' : ''}${offset} s`);
    await ctx.clock.set(offset);
    await sleep(5_000);
  }
  return steps.length;
}

/** Fills the broker's store to the last byte, keeps it full, frees it; the broker restarted if it gave up. */
async function disk(ctx: NemesisContext): Promise<number> {
  const store = mounted(ctx.disk, 'disk');
  const written = await store.fill();
  ctx.say(`the nats-server's store is full (${Math.round(written / 2 ** 20)} MB of ballast)`);
  await sleep(5_000);
  await store.free();
  ctx.say('store freed');
  if (!(await jetStreamAnswers(ctx.cluster))) {
    ctx.say('JetStream stayed disabled after the disk filled: restarting the nats-server');
    await ctx.cluster.nats.restart();
  }
  return 1;
}

/** How long a stalled disk stays frozen: past the services' publish and query timeouts. */
export const STALL_MS = 8_000;

/** Freezes the broker's store: appends and acks wait, clients time out and retry; then thaws it. */
async function stall(ctx: NemesisContext): Promise<number> {
  const store = mounted(ctx.disk, 'stall');
  await store.stall();
  ctx.say(`the nats-server's disk stalls (every write waits) for ${STALL_MS} ms`);
  await sleep(STALL_MS);
  await store.resume();
  ctx.say('disk answers again');
  return 1;
}

/** Fills Postgres's disk: commits fail (the server may stop itself); frees it; restarts Postgres if it stopped. */
async function pgdisk(ctx: NemesisContext): Promise<number> {
  const pg = mounted(ctx.pgDisk, 'pgdisk');
  const written = await pg.fill();
  ctx.say(`Postgres's disk is full (${Math.round(written / 2 ** 20)} MB of ballast)`);
  await sleep(5_000);
  await pg.free();
  ctx.say('Postgres disk freed');
  if (!(await postgresAnswers(ctx.cluster))) {
    ctx.say('Postgres stopped when its disk filled: starting it again');
    await ctx.cluster.restartPostgres(0);
  }
  return 1;
}

/** Freezes Postgres's disk: statements that write wait, callers time out; then thaws it. */
async function pgstall(ctx: NemesisContext): Promise<number> {
  const pg = mounted(ctx.pgDisk, 'pgstall');
  await pg.stall();
  ctx.say(`Postgres's disk stalls for ${STALL_MS} ms`);
  await sleep(STALL_MS);
  await pg.resume();
  ctx.say('Postgres disk answers again');
  return 1;
}

/** How long the netsplit nemesis keeps its replicas cut off: past the ack wait, a call's lease and a request's timeout. */
export const NETSPLIT_MS = 8_000;

/**
 * Cuts a planner, a gateway and the worker off from NATS (Postgres, the model and the payment API stay
 * reachable): their connections stay open and nothing passes, so what they send waits and arrives after the
 * heal, when others have taken their messages over. Returns the links cut.
 */
async function netsplit(ctx: NemesisContext): Promise<number> {
  const links = PARTITIONED.flatMap((label) => {
    const link = ctx.cluster.links.get(label);
    return link ? [{ label, link }] : [];
  });
  ctx.say(`${links.map((l) => l.label).join(', ')} cut off from NATS for ${NETSPLIT_MS} ms`);
  for (const { link } of links) link.cut();
  await sleep(NETSPLIT_MS);
  for (const { link } of links) link.heal();
  ctx.say('links to NATS healed');
  return links.length;
}

/** Whether Postgres takes a query within a few seconds. */
async function postgresAnswers(cluster: Cluster): Promise<boolean> {
  for (let i = 0; i < 10; i += 1) {
    try {
      await cluster.sql`select 1`;
      return true;
    } catch {
      await sleep(500);
    }
  }
  return false;
}

/** Whether JetStream takes a request within a few seconds (2.9 disables itself on a store write error). */
async function jetStreamAnswers(cluster: Cluster): Promise<boolean> {
  for (let i = 0; i < 10; i += 1) {
    // A disabled JetStream does not answer at all: each look gives up after a second, not the client's 5 s.
    const answered = await Promise.race([
      cluster.jsm.getAccountInfo().then(
        () => true,
        () => false,
      ),
      sleep(1_000).then(() => false),
    ]);
    if (answered) return true;
    await sleep(500);
  }
  return false;
}

/** Room a disk round leaves before its runs start: filling the rest at the strike then takes a moment. */
const DISK_HEADROOM = 64 * 2 ** 20;
/** Postgres's: more than a WAL segment (16 MB), so the runs start on a database that still writes. */
const PG_DISK_HEADROOM = 48 * 2 ** 20;

/**
 * What a nemesis readies before its round's runs are submitted, so that its strike lands while they are in
 * flight: the disk rounds fill all but a little of their disk (writing a gigabyte of ballast at the strike
 * took longer than a short round's runs).
 */
export const PREPARE: Partial<Record<NemesisName, (ctx: NemesisContext) => Promise<void>>> = {
  disk: async (ctx) => {
    await mounted(ctx.disk, 'disk').fill(DISK_HEADROOM);
  },
  pgdisk: async (ctx) => {
    await mounted(ctx.pgDisk, 'pgdisk').fill(PG_DISK_HEADROOM);
  },
};

export const INJECT: Record<NemesisName, (ctx: NemesisContext) => Promise<number>> = {
  pause,
  slow,
  clock,
  disk,
  stall,
  pgdisk,
  pgstall,
  netsplit,
};

/** `pause,slow` → the names, `all` → every nemesis; throws naming what it does not know. */
export function parseNemeses(list: string): NemesisName[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.includes('all')) return [...NEMESES];
  const unknown = names.filter((name) => !(NEMESES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`--nemesis takes a comma-separated list of ${NEMESES.join(', ')} or all; got "${list}"`);
  return names as NemesisName[];
}
