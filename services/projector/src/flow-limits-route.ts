import type { JetStreamClient } from '@nats-io/jetstream';
import { BUCKETS, type FlowLimitsResponse } from '@dura/contracts';
import { decodeLimitRecord, limitRows, type LimitDeclaration, type LimitRecord } from '@dura/core';
import { readKvMessages } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { tenantFilter } from './auth/caller';
import type { ApiRoute } from './auth/guard';

const decoded = (part: string): string => Buffer.from(part, 'base64url').toString('utf8');

/** What `dura_flow` holds now: limit records (`l.<key>`) and declarations (`d.<key>.<digest>`); tickets skipped. */
export async function readFlowState(
  js: JetStreamClient,
  log?: Logger,
): Promise<{ records: { key: string; record: LimitRecord }[]; declarations: LimitDeclaration[] }> {
  const state = {
    records: [] as { key: string; record: LimitRecord }[],
    declarations: [] as LimitDeclaration[],
  };
  const read = await readKvMessages(js, BUCKETS.flow, (key) => key.startsWith('l.') || key.startsWith('d.'));
  // Undefined: no planner has declared or admitted anything yet.
  if (!read) return state;
  for (const { key, msg } of read) {
    try {
      const [kind, name] = key.split('.');
      if (kind === 'l')
        state.records.push({ key: decoded(name ?? ''), record: decodeLimitRecord(msg.json<unknown>()) });
      else state.declarations.push(msg.json<LimitDeclaration>());
    } catch (err) {
      log?.warn('a dura_flow entry is not valid; left out of GET /flow/limits', { key, err: String(err) });
    }
  }
  return state;
}

/**
 * `GET /flow/limits` (scope `read`): every model limit declared or in use and every concurrency key, with its
 * state now, read from `dura_flow` (read only). A tenant's caller sees the shared limits and its own, its own
 * callers waiting, and no concurrency key (a key does not say whose it is).
 */
export function flowLimitRoutes(deps: {
  js: JetStreamClient;
  log?: Logger;
  clock?: () => number;
}): ApiRoute[] {
  const clock = deps.clock ?? Date.now;
  return [
    {
      method: 'GET',
      path: '/flow/limits',
      scope: 'read',
      async handle({ caller }) {
        const { records, declarations } = await readFlowState(deps.js, deps.log);
        const view = limitRows(records, declarations, clock());
        const tenant = tenantFilter(caller);
        const body: FlowLimitsResponse =
          tenant === undefined
            ? view
            : {
                ...view,
                limits: view.limits
                  .filter(
                    (row) =>
                      row.kind === 'model' &&
                      (row.tenant === undefined || row.tenant === tenant || row.tenant === '*'),
                  )
                  .map((row) => {
                    const mine = row.waiting.byTenant[tenant] ?? 0;
                    return {
                      ...row,
                      waiting: {
                        total: mine,
                        queue: 0,
                        line: mine,
                        byTenant: mine ? { [tenant]: mine } : {},
                      },
                    };
                  }),
              };
        return { status: 200, body };
      },
    },
  ];
}
