// The projector's NATS user may publish exactly what its HTTP routes need (the read side and the write door)
// and nothing more: a route added without its permission fails (services/dev/test/projector-write-door.e2e.spec.ts
// serves each route as this user), and a permission added without a route fails here.
import { describe, expect, it } from 'vitest';
import { readRepoFile } from './repo';

/** The quoted subjects of `list` (`allow` or `deny`) in the `publish` block of permission set `set`. */
function publishList(set: string, list: 'allow' | 'deny'): string[] {
  const conf = readRepoFile('deploy/nats/permissions.conf');
  const block = new RegExp(`^${set} = \\{([\\s\\S]*?)^\\}`, 'm').exec(conf)?.[1] ?? '';
  const publish = /publish = \{([\s\S]*?)\n {2}\}/.exec(block)?.[1] ?? '';
  const entries = new RegExp(`${list} = \\[([\\s\\S]*?)\\]`).exec(publish)?.[1] ?? '';
  return [...entries.matchAll(/^\s*"([^"]+)"/gm)].map((m) => m[1]!);
}

/** The read side: follows and reads the run log (JetStream API only). */
const READ_SIDE = [
  '$JS.API.INFO',
  '$JS.API.STREAM.INFO.*',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.CREATE.DURA_REQUESTS',
  '$JS.API.STREAM.CREATE.DURA_RUNS',
  '$JS.API.STREAM.CREATE.DURA_TASKS',
  '$JS.API.STREAM.CREATE.DURA_DLQ',
  '$JS.API.STREAM.MSG.GET.DURA_RUNS',
  '$JS.API.DIRECT.GET.DURA_RUNS',
  '$JS.API.DIRECT.GET.DURA_RUNS.>',
  '$JS.API.CONSUMER.CREATE.DURA_RUNS',
  '$JS.API.CONSUMER.CREATE.DURA_RUNS.>',
  '$JS.API.CONSUMER.INFO.DURA_RUNS.>',
  '$JS.API.CONSUMER.MSG.NEXT.DURA_RUNS.>',
  '$JS.API.CONSUMER.DELETE.DURA_RUNS.>',
  // GET /runs/:id/tokens: the live model text of DURA_TOKENS, read by message get (created when missing).
  '$JS.API.STREAM.CREATE.DURA_TOKENS',
  '$JS.API.STREAM.MSG.GET.DURA_TOKENS',
  '$JS.API.DIRECT.GET.DURA_TOKENS',
  '$JS.API.DIRECT.GET.DURA_TOKENS.>',
  // GET /agents, GET /tools: the catalogue the planners and gateways announce, read by message get.
  '$JS.API.STREAM.MSG.GET.KV_dura_catalogue',
  // GET /flow/limits: the limits and declarations of dura_flow, read by message get.
  '$JS.API.STREAM.MSG.GET.KV_dura_flow',
];

/** The write door, by route: what each publishes after checking the caller. */
const WRITE_DOOR = {
  'POST /runs': [
    'dura.submit',
    // debounce and dedupe: the key's gate record (compare-and-set).
    '$KV.dura_run_gates.>',
    '$JS.API.STREAM.CREATE.KV_dura_run_gates',
    '$JS.API.DIRECT.GET.KV_dura_run_gates',
    '$JS.API.DIRECT.GET.KV_dura_run_gates.>',
    // debounce: the request handed to the planners, which seal it before its window keeps it.
    'dura.gate.runs',
  ],
  'POST /runs/:id/signals, /cancel': ['dura.signal'],
  'POST /runs/:id/fork': ['dura.fork'],
  'POST /events': ['dura.event.>'],
  '/schedules': [
    '$KV.dura_schedules.>',
    '$JS.API.STREAM.CREATE.KV_dura_schedules',
    '$JS.API.STREAM.MSG.GET.KV_dura_schedules',
    '$JS.API.DIRECT.GET.KV_dura_schedules',
    '$JS.API.DIRECT.GET.KV_dura_schedules.>',
  ],
  '/triggers': [
    '$KV.dura_triggers.>',
    '$JS.API.STREAM.CREATE.KV_dura_triggers',
    '$JS.API.DIRECT.GET.KV_dura_triggers',
    '$JS.API.DIRECT.GET.KV_dura_triggers.>',
  ],
};

describe('DURA_PROJECTOR in deploy/nats/permissions.conf', () => {
  const allow = publishList('DURA_PROJECTOR', 'allow');
  const deny = publishList('DURA_PROJECTOR', 'deny');

  it('allows exactly the read side and the write door of its routes, nothing more', () => {
    expect([...allow].sort()).toEqual([...READ_SIDE, ...Object.values(WRITE_DOOR).flat()].sort());
  });

  it('denies what a compromised projector could use, and nothing its routes need', () => {
    for (const subject of [
      'dura.run.>',
      'dura.task.>',
      'dura.dlq.>',
      '$KV.dura_snapshots.>',
      '$KV.dura_cancellations.>',
      '$KV.dura_parked_runs.>',
      '$KV.dura_tenant_runs.>',
      '$KV.dura_flow.>',
      '$O.>',
      '$JS.ACK.>',
      '$JS.API.STREAM.UPDATE.>',
      '$JS.API.STREAM.DELETE.>',
      '$JS.API.STREAM.PURGE.>',
      '$JS.API.STREAM.MSG.DELETE.>',
    ])
      expect(deny, subject).toContain(subject);
    // Deny wins over allow in nats-server: an entry in both would silently close a route.
    expect(allow.filter((subject) => deny.includes(subject))).toEqual([]);
  });

  it('may write no bucket but the schedules, the triggers and the run gates, and create no stream of events or payloads', () => {
    expect(allow.filter((s) => s.startsWith('$KV.')).sort()).toEqual([
      '$KV.dura_run_gates.>',
      '$KV.dura_schedules.>',
      '$KV.dura_triggers.>',
    ]);
    expect(allow.filter((s) => /STREAM\.CREATE\.(DURA_EVENTS|OBJ_)/.test(s))).toEqual([]);
  });
});
