import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { SUBJECTS, TASK_VERSION, type DecideTask } from '@dura/contracts';
import {
  capacityReason,
  limitsFor,
  nextInLine,
  refundTicket,
  releaseSlot,
  settleTicket,
  takeSlot,
  takeTicket,
  throttled,
  type CallCost,
  type LimitName,
  type ModelLimit,
  type SlotCaller,
} from '@dura/core';
import type { FlowStore, Ticket } from './flow-store';
import { flowMetrics } from './flow-metrics';
import { createLineWakes } from './line-wakes';
import { renewWhileInFlight } from './slot-renewal';

/** A model call as flow control sees it: its worst case, whose run and decision it is, which tenant pays. */
export interface CallRequest {
  runId: string;
  /** The decision the call makes (`state.decisions`): a call is one holder across re-drives of the run. */
  decision: number;
  /** Which model call of the decision it is (a code agent's step may make several); default 0. */
  call?: number;
  tenant: string;
  /** The run's priority among callers in line for the same limit (higher first; default 0). */
  priority?: number;
  /** `provider/model`. */
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export type FlowAdmission =
  | { kind: 'go'; settle(used: { inputTokens: number; outputTokens: number } | undefined): Promise<void> }
  | { kind: 'wait'; until: number; reason: string; limit: LimitName; model: string };

export interface FlowControl {
  /** Whether the call may go now (then `settle` once it answered), or until when it waits, and on which limit. */
  admit(call: CallRequest): Promise<FlowAdmission>;
  /** The provider answered 429: every shared limit of `model` lowers its rate (see `throttled`). */
  throttle(model: string, retryAfterMs: number): Promise<void>;
  /**
   * A slot of a run's concurrency key, held from its first decision to its end; else when to ask again.
   * Runs waiting for the key go by priority, then by their tenants' shares, then in the order they asked.
   */
  enterKey(
    key: string,
    limit: number,
    runId: string,
    caller?: SlotCaller,
  ): Promise<{ kind: 'go' } | { kind: 'wait'; until: number }>;
  /** The run ended: its key's slot is free, and the first runs in line for it are woken. */
  leaveKey(key: string, limit: number, runId: string): Promise<void>;
  /**
   * The run ended while its call may wait in a rate's line (cancelled, failed): the call leaves every line
   * it may be in, and whoever it held back is woken if due.
   */
  leaveLines(call: Pick<CallRequest, 'runId' | 'decision' | 'tenant'>): Promise<void>;
}

/** A ticket goes only once due: a call made earlier could reach the provider before its bucket has room. */
const DUE_SLACK_MS = 0;
/** Concurrency keys: a run that holds one and shows no sign of life for this long (killed, lost) gives it back. */
export const KEY_LEASE_MS = 10 * 60_000;

/**
 * Model limits and concurrency keys over the shared `FlowStore`. A call takes a concurrency slot under each
 * limit first, then a rate ticket; a ticket for later gives the slots back and the run waits for it on a
 * durable timer, and finds its ticket in the store when it asks again.
 */
export function createFlowControl(deps: {
  store: FlowStore;
  limits: readonly ModelLimit[];
  clock?: () => number;
  /** How long a concurrent call's slot is leased: a holder killed mid-call frees it after this (default 5 min). */
  leaseMs?: number;
  /**
   * Tells a run waiting for a slot that one came free (a decide task the planner answers by ending its wait);
   * without it, waiting runs find out when their timer fires.
   */
  wake?: (runId: string) => Promise<void>;
}): FlowControl {
  const clock = deps.clock ?? Date.now;
  const leaseMs = deps.leaseMs ?? 5 * 60_000;
  const metrics = flowMetrics();
  const { wakeAll, updateRate, leaveLines } = createLineWakes({ ...deps, clock });

  async function releaseAll(
    keys: readonly { key: string; limit: ModelLimit }[],
    holder: string,
  ): Promise<void> {
    await Promise.all(keys.map(({ key, limit }) => release(key, limit, holder)));
  }

  /** Gives a slot back and wakes whoever is first in line for it. */
  async function release(key: string, limit: ModelLimit, holder: string): Promise<void> {
    const next = await deps.store.update(key, (record) => {
      const released = releaseSlot(record, holder, clock());
      return { record: released, result: nextInLine(released, limit, clock()) };
    });
    await wakeAll(next);
  }

  async function admit(call: CallRequest): Promise<FlowAdmission> {
    const applying = limitsFor(deps.limits, call.model, call.tenant);
    if (applying.length === 0) return { kind: 'go', settle: () => Promise.resolve() };
    const holder = `${call.runId}:${call.decision}${call.call ? `.${call.call}` : ''}`;
    // Two drives of one decision (a redelivered task beside a live one) each take a slot of their own.
    const slot = `${holder}:${randomUUID()}`;
    const cost: CallCost = {
      holder,
      inputTokens: call.inputTokens,
      outputTokens: call.outputTokens,
      tenant: call.tenant,
      priority: call.priority ?? 0,
    };
    const wait = (until: number, limit: LimitName, perTenant: boolean): FlowAdmission => {
      const labels = { model: call.model, key: '', tenant: call.tenant, limit };
      metrics.waited(labels, (until - clock()) / 1000);
      const reason = capacityReason(call.model, limit, perTenant ? call.tenant : undefined);
      return { kind: 'wait', until, limit, model: call.model, reason };
    };
    // Tickets first: the call's place under the rates, kept while it waits for their time (asking again then
    // takes nothing twice).
    const tickets: { key: string; limit: ModelLimit; ticket: Ticket; stored?: number }[] = [];
    // A limit whose line the call waits in: it asks again then (keeping its place), with no ticket under it.
    let inLine: { until: number; limit: LimitName; perTenant: boolean } | undefined;
    for (const { limit, key } of applying) {
      if (!limit.requestsPerMinute && !limit.inputTokensPerMinute && !limit.outputTokensPerMinute) continue;
      const held = await deps.store.ticket(key, holder);
      if (held) {
        tickets.push({ key, limit, ticket: held, stored: held.revision });
        continue;
      }
      // A caller that joins the line moves nobody else forward: only one served may.
      const outcome = await updateRate(
        key,
        limit,
        cost,
        (record) => {
          const ticket = takeTicket(record, limit, cost, clock());
          return { record: ticket.record, result: ticket.outcome };
        },
        (taken) => taken.kind !== 'line',
      );
      if (outcome.kind === 'line') {
        if (!inLine || outcome.recheckAt > inLine.until)
          inLine = { until: outcome.recheckAt, limit: outcome.limit, perTenant: limit.tenant !== undefined };
        continue;
      }
      const ticket: Ticket = outcome.kind === 'at' ? outcome : { at: clock(), limit: 'requests per minute' };
      tickets.push({ key, limit, ticket });
    }
    const keep = () =>
      Promise.all(
        tickets
          .filter((t) => t.stored === undefined)
          .map((t) => deps.store.putTicket(t.key, holder, { at: t.ticket.at, limit: t.ticket.limit })),
      );
    const latest = tickets.reduce<(typeof tickets)[number] | undefined>(
      (last, entry) => (last && last.ticket.at >= entry.ticket.at ? last : entry),
      undefined,
    );
    // A call that waits for anything but its tickets' time gives them back, and takes fresh ones when it
    // asks again: a ticket spent long after it was taken could meet calls admitted after it at the provider.
    const giveBack = () =>
      Promise.all(
        tickets.map(async (t) => {
          if (t.stored !== undefined && !(await deps.store.useTicket(t.key, holder, t.stored))) return;
          await updateRate(t.key, t.limit, cost, (record) => ({
            record: refundTicket(record, t.limit, cost, clock()),
            result: undefined,
          }));
        }),
      );
    if (inLine) {
      await giveBack();
      return wait(inLine.until, inLine.limit, inLine.perTenant);
    }
    if (latest && latest.ticket.at > clock() + DUE_SLACK_MS) {
      await keep();
      return wait(latest.ticket.at, latest.ticket.limit, latest.limit.tenant !== undefined);
    }
    // Then a slot under each concurrency limit, in line: a run woken for a freed slot asks only for it.
    const slotted: { key: string; limit: ModelLimit }[] = [];
    for (const { limit, key } of applying) {
      if (limit.concurrentCalls === undefined) continue;
      const outcome = await deps.store.update(key, (record) => {
        const taken = takeSlot(record, limit, holder, leaseMs, clock(), slot, cost);
        return { record: taken.record, result: taken.outcome };
      });
      if (outcome.kind === 'full') {
        await Promise.all([giveBack(), releaseAll(slotted, slot)]);
        return wait(outcome.recheckAt, 'concurrent calls', limit.tenant !== undefined);
      }
      slotted.push({ key, limit });
    }
    // A ticket goes once: another drive of the same call (a redelivered task) that used it first wins, and
    // this one asks again from the start, for tickets of its own.
    const used = await Promise.all(
      tickets.map((t) =>
        t.stored === undefined ? Promise.resolve(true) : deps.store.useTicket(t.key, holder, t.stored),
      ),
    );
    if (used.includes(false)) {
      await releaseAll(slotted, slot);
      return admit(call);
    }
    metrics.admitted({ model: call.model, tenant: call.tenant });
    const renewal = renewWhileInFlight({ store: deps.store, leaseMs, clock }, slotted, slot);
    return {
      kind: 'go',
      settle: async (used) => {
        clearInterval(renewal);
        await releaseAll(slotted, slot);
        if (!used) return;
        await Promise.all(
          tickets.map(({ key, limit }) =>
            updateRate(key, limit, cost, (record) => ({
              record: settleTicket(record, limit, cost, used, clock()),
              result: undefined,
            })),
          ),
        );
      },
    };
  }

  return {
    admit,

    async throttle(model, retryAfterMs) {
      const shared = deps.limits.filter((limit) => limit.model === model && limit.tenant === undefined);
      await Promise.all(
        shared.map((limit) =>
          deps.store.update(model, (record) => ({
            record: throttled(record, limit, retryAfterMs, clock()),
            result: undefined,
          })),
        ),
      );
      metrics.throttled(model);
    },

    async enterKey(key, limit, runId, caller = {}) {
      const outcome = await deps.store.update(`key:${key}`, (record) => {
        const keyLimit = { model: key, concurrentCalls: limit };
        const taken = takeSlot(record, keyLimit, runId, KEY_LEASE_MS, clock(), runId, caller);
        // The key's limit rides along for operators (GET /flow/limits); written only when it changes.
        const shown = taken.record.keyLimit === limit ? taken.record : { ...taken.record, keyLimit: limit };
        return { record: shown, result: taken.outcome };
      });
      if (outcome.kind === 'go') return { kind: 'go' };
      metrics.waited(
        { model: '', key, tenant: caller.tenant ?? '', limit: 'concurrency key' },
        (outcome.recheckAt - clock()) / 1000,
      );
      return { kind: 'wait', until: outcome.recheckAt };
    },

    async leaveKey(key, limit, runId) {
      await release(`key:${key}`, { model: key, concurrentCalls: limit }, runId);
    },

    async leaveLines({ runId, decision, tenant }) {
      await leaveLines(`${runId}:${decision}`, tenant);
    },
  };
}

/** Wakes a run waiting for a slot: a decide task of reason `capacity` (each wake its own message). */
export function wakeFor(js: JetStreamClient): (runId: string) => Promise<void> {
  return async (runId) => {
    const task: DecideTask = { v: TASK_VERSION, runId, afterSeq: 0, reason: 'capacity' };
    await js.publish(SUBJECTS.decideTask, JSON.stringify(task), { msgID: `${runId}@wake-${randomUUID()}` });
  };
}
