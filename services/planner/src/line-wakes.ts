import { dueInLine, leftLine, limitsFor, type CallCost, type LimitRecord, type ModelLimit } from '@dura/core';
import type { FlowStore } from './flow-store';

/**
 * Wakes of runs waiting for capacity: a freed slot's next callers, and callers in a rate's line whose turn
 * came sooner than they were told (the line moved faster than estimated, or a caller ahead left it). A wake is
 * a decide task; the run ends its wait and asks for admission again.
 */
export function createLineWakes(deps: {
  store: FlowStore;
  limits: readonly ModelLimit[];
  clock: () => number;
  wake?: (runId: string) => Promise<void>;
}) {
  /** Wakes waiting callers (holders) at once: each asks for admission again. */
  async function wakeAll(holders: readonly string[]): Promise<void> {
    const wake = deps.wake;
    if (!wake) return;
    await Promise.all(
      holders.map((waiter) =>
        wake(runOf(waiter)).catch(() => {
          // A lost wake costs time, not correctness: the waiter asks again when its timer fires (and a
          // caller in line is woken again by a later admission, see `dueInLine`).
        }),
      ),
    );
  }

  /**
   * Applies `change` to a rate limit's record, then wakes the callers in its line whose turn came sooner than
   * they were told (see `dueInLine`), unless `moved` says the change moved nobody forward.
   */
  async function updateRate<T>(
    key: string,
    limit: ModelLimit,
    cost: CallCost,
    change: (record: LimitRecord) => { record: LimitRecord; result: T },
    moved: (result: T) => boolean = () => true,
  ): Promise<T> {
    const { result, wake } = await deps.store.update(key, (record) => {
      const changed = change(record);
      if (!moved(changed.result))
        return { record: changed.record, result: { result: changed.result, wake: [] as string[] } };
      const due = dueInLine(changed.record, limit, cost, deps.clock());
      return { record: due.record, result: { result: changed.result, wake: due.wake } };
    });
    await wakeAll(wake);
    return result;
  }

  /** `holder` (`runId:decision`) of `tenant` leaves every rate's line it may be in; the next in line is woken. */
  async function leaveLines(holder: string, tenant: string): Promise<void> {
    const models = [...new Set(deps.limits.map((limit) => limit.model))];
    const lines = models
      .flatMap((model) => limitsFor(deps.limits, model, tenant))
      .filter(
        ({ limit }) => limit.requestsPerMinute || limit.inputTokensPerMinute || limit.outputTokensPerMinute,
      );
    const woken = await Promise.all(
      lines.map(({ key, limit }) =>
        deps.store.update(key, (record) => {
          const left = leftLine(record, limit, holder, deps.clock());
          return { record: left.record, result: left.wake };
        }),
      ),
    );
    await wakeAll(woken.flat());
  }

  return { wakeAll, updateRate, leaveLines };
}

/** The run of a waiter: a call's holder is `runId:decision` (`.k`: the decision's k-th call), a key's the run id. */
function runOf(holder: string): string {
  const colon = holder.lastIndexOf(':');
  return colon > 0 && /^\d+(\.\d+)?$/.test(holder.slice(colon + 1)) ? holder.slice(0, colon) : holder;
}
