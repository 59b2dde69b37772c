import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { ScheduleView } from '@dura/client';
import { DuraError, type ScheduleSpecInput } from '@dura/contracts';
import { intFlag, jsonFlag, positional, stringFlag } from '../args';
import { EXIT, UsageError, type CommandModule, type CommandContext, type ParsedArgs } from '../command';

const SUBCOMMANDS = ['create', 'ls', 'get', 'pause', 'resume', 'trigger', 'delete'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "5m", "1h", "2d" or milliseconds, as milliseconds. */
function duration(text: string, flag: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match)
    throw new UsageError(`--${flag} ${text}: expected a duration such as 30s, 5m, 1h, 1d or milliseconds`);
  return Number(match[1]) * (UNITS[match[2] ?? 'ms'] ?? 1);
}

async function readRequestFile(file: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${path} (${err.code ?? err.message}): check the path`);
  });
  let value: unknown;
  try {
    value = ['.yaml', '.yml'].includes(extname(path).toLowerCase())
      ? (await import('yaml')).parse(text)
      : JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path} is not a valid request: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`${path} must hold one run request (an object with "agent")`);
  return value as Record<string, unknown>;
}

/** The run each tick starts: a request file, or a registered agent by name. */
async function template(args: ParsedArgs): Promise<Record<string, unknown>> {
  const file = stringFlag(args, 'request');
  const agent = stringFlag(args, 'agent');
  if ((file === undefined) === (agent === undefined))
    throw new UsageError('give the run to start: --request FILE (as for dura run) or --agent NAME[@VERSION]');
  const [name, version] = (agent ?? '').split('@');
  const request = file
    ? await readRequestFile(file)
    : { agent: { kind: 'agent', name, ...(version ? { version } : {}) } };
  const input = jsonFlag(args, 'input');
  const { runId: _runId, tenant: _tenant, ...rest } = request;
  return { v: 1, ...rest, ...(input === undefined ? {} : { input }) };
}

async function specOf(id: string, args: ParsedArgs): Promise<ScheduleSpecInput> {
  const cron = stringFlag(args, 'cron');
  const every = stringFlag(args, 'every');
  if ((cron === undefined) === (every === undefined))
    throw new UsageError('give exactly one of --cron EXPR (with --tz ZONE) and --every DURATION');
  const tenant = stringFlag(args, 'tenant');
  if (tenant === undefined) throw new UsageError('--tenant is required: the tenant the runs belong to');
  const timeZone = stringFlag(args, 'tz');
  const window = stringFlag(args, 'catch-up-window');
  const grace = stringFlag(args, 'grace');
  return {
    id,
    tenant,
    ...(cron === undefined ? {} : { cron }),
    ...(timeZone === undefined ? {} : { timeZone }),
    ...(every === undefined ? {} : { everyMs: duration(every, 'every') }),
    request: (await template(args)) as ScheduleSpecInput['request'],
    overlap: (stringFlag(args, 'overlap') ?? 'skip') as ScheduleSpecInput['overlap'] & string,
    catchUp: {
      policy: (stringFlag(args, 'catch-up') ?? 'skip') as 'skip' | 'last' | 'all',
      ...(window === undefined ? {} : { windowMs: duration(window, 'catch-up-window') }),
      ...(grace === undefined ? {} : { graceMs: duration(grace, 'grace') }),
    },
  };
}

const timingText = (s: ScheduleView): string =>
  s.spec.cron !== undefined
    ? `cron ${s.spec.cron} ${s.spec.timeZone ?? 'UTC'}`
    : `every ${s.spec.everyMs} ms`;

function printSchedule(ctx: CommandContext, s: ScheduleView): void {
  ctx.out.line(`schedule ${s.spec.id} (tenant ${s.spec.tenant})${s.paused ? ' PAUSED' : ''}`);
  ctx.out.line(`  timing    ${timingText(s)}`);
  ctx.out.line(`  overlap   ${s.spec.overlap}`);
  ctx.out.line(
    `  catch-up  ${s.spec.catchUp.policy} (grace ${s.spec.catchUp.graceMs} ms, window ${s.spec.catchUp.windowMs} ms)`,
  );
  ctx.out.line(`  next      ${s.next.join(', ') || '-'}`);
  const past = s.history.slice(-20);
  if (past.length === 0) ctx.out.line('  past      -');
  else
    ctx.out.table(
      ['TICK', 'ACTION', 'RUN'],
      past.map((h) => [
        new Date(h.tick).toISOString(),
        h.count ? `${h.action} (${h.count})` : h.action,
        h.runId || '-',
      ]),
    );
}

async function act(sub: Subcommand, args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const { schedules } = ctx.client;
  const id = () => positional(args, 1, 'schedule id');
  switch (sub) {
    case 'create': {
      const { schedule, created } = await schedules.create(await specOf(id(), args));
      if (ctx.json) ctx.out.json({ ...schedule, created });
      else {
        ctx.out.line(
          created
            ? `created schedule ${schedule.spec.id}`
            : `schedule ${schedule.spec.id} exists with this definition`,
        );
        printSchedule(ctx, schedule);
      }
      return EXIT.ok;
    }
    case 'ls': {
      const tenant = stringFlag(args, 'tenant');
      const list = await schedules.list(tenant === undefined ? {} : { tenant });
      if (ctx.json) ctx.out.json({ schedules: list });
      else
        ctx.out.table(
          ['ID', 'TENANT', 'TIMING', 'OVERLAP', 'CATCH-UP', 'STATE', 'NEXT'],
          list.map((s) => [
            s.spec.id,
            s.spec.tenant,
            timingText(s),
            s.spec.overlap,
            s.spec.catchUp.policy,
            s.paused ? 'paused' : 'active',
            s.next[0] ?? '-',
          ]),
        );
      return EXIT.ok;
    }
    case 'get': {
      const schedule = await schedules.get(id(), intFlag(args, 'next', { min: 1, max: 100 }) ?? 5);
      if (ctx.json) ctx.out.json(schedule);
      else printSchedule(ctx, schedule);
      return EXIT.ok;
    }
    case 'pause':
    case 'resume': {
      const schedule = await (sub === 'pause' ? schedules.pause(id()) : schedules.resume(id()));
      if (ctx.json) ctx.out.json(schedule);
      else ctx.out.line(`schedule ${schedule.spec.id} ${sub === 'pause' ? 'paused' : 'resumed'}`);
      return EXIT.ok;
    }
    case 'trigger': {
      const key = stringFlag(args, 'key');
      const { runId } = await schedules.trigger(id(), key);
      if (ctx.json) ctx.out.json({ runId });
      else ctx.out.line(`run ${runId} requested; dura watch ${runId} follows it`);
      return EXIT.ok;
    }
    case 'delete': {
      const existed = await schedules.delete(id());
      if (ctx.json) ctx.out.json({ deleted: existed });
      else ctx.out.line(existed ? `schedule ${id()} deleted` : `no schedule ${id()}`);
      return existed ? EXIT.ok : EXIT.notFound;
    }
  }
}

export const schedule: CommandModule = {
  name: 'schedule',
  usage: [
    'dura schedule create <id> (--cron EXPR [--tz ZONE] | --every DURATION) --tenant T',
    '                          (--request FILE | --agent NAME[@VERSION]) [--input JSON]',
    '                          [--overlap skip|buffer_one|allow_all|cancel_previous]',
    '                          [--catch-up skip|last|all] [--catch-up-window DURATION] [--grace DURATION]',
    'dura schedule ls [--tenant T]',
    'dura schedule get <id> [--next N]',
    'dura schedule pause|resume|trigger|delete <id>',
  ].join('\n'),
  flags: {
    cron: {
      type: 'string',
      value: 'EXPR',
      description: 'cron expression: 5 fields, or 6 with seconds first',
    },
    tz: { type: 'string', value: 'ZONE', description: 'IANA time zone of --cron (default UTC)' },
    every: {
      type: 'string',
      value: 'DURATION',
      description: 'fixed interval instead of --cron: 30s, 5m, 1h',
    },
    tenant: { type: 'string', value: 'T', description: 'tenant of the runs (create), or to list (ls)' },
    request: {
      type: 'string',
      value: 'FILE',
      description: 'the run request (JSON or YAML, as for dura run)',
    },
    agent: { type: 'string', value: 'NAME[@VERSION]', description: 'a registered agent to run' },
    input: { type: 'string', value: 'JSON', description: 'input of every run' },
    overlap: {
      type: 'string',
      value: 'POLICY',
      description: 'a tick while the last run still runs (default skip)',
    },
    'catch-up': {
      type: 'string',
      value: 'POLICY',
      description: 'ticks missed while no planner ran (default skip)',
    },
    'catch-up-window': {
      type: 'string',
      value: 'DURATION',
      description: 'catch-up all: only this recent (default 1h)',
    },
    grace: {
      type: 'string',
      value: 'DURATION',
      description: 'a tick this late is still on time (default 5s)',
    },
    next: { type: 'string', value: 'N', description: 'get: how many next ticks to show (default 5)' },
    key: {
      type: 'string',
      value: 'KEY',
      description: 'trigger: idempotency key (default: the current second)',
    },
  },
  positionals: { min: 1, max: 2 },
  help: `Schedules are stored in NATS (KV dura_schedules); every planner ticks them and each tick starts one
run, with id sch-<id>-<tick epoch seconds>. See docs/triggers.md.

Examples:
  dura schedule create nightly --cron "0 2 * * *" --tz Europe/Paris --tenant acme --agent report
  dura schedule create poll --every 30s --tenant acme --request poll.yaml --overlap skip --catch-up last
  dura schedule get nightly
  dura schedule trigger nightly

Exit code: 0 done; 2 bad flags or an invalid schedule; 3 no such schedule.`,
  async run(args, ctx) {
    const sub = positional(args, 0, 'subcommand');
    if (!(SUBCOMMANDS as readonly string[]).includes(sub))
      throw new UsageError(`unknown subcommand "${sub}": use one of ${SUBCOMMANDS.join(', ')}`);
    try {
      return await act(sub as Subcommand, args, ctx);
    } catch (err) {
      if (err instanceof DuraError && (err.code === 'invalid_schedule' || err.code === 'schedule_exists'))
        throw new UsageError(err.message);
      throw err;
    }
  },
};
