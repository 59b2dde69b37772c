import type { ListRunsFilter } from '@dura/client';
import { RUN_LIST_SORTS, RUN_STATUSES, type RunSummary } from '@dura/contracts';
import { intFlag, isoFlag, listFlag, stringFlag } from '../args';
import { EXIT, UsageError, type CommandModule } from '../command';
import { formatUsd } from './get';

const STATUSES: readonly string[] = RUN_STATUSES;
const SORTS: readonly string[] = RUN_LIST_SORTS;

function row(run: RunSummary): string[] {
  return [
    run.runId,
    run.status,
    run.agent ?? '-',
    run.parentRunId ?? '-',
    run.costUsd === undefined ? '-' : formatUsd(run.costUsd),
    String(run.steps),
    String(run.pendingCalls),
    run.createdAt ?? '-',
    run.updatedAt ?? '-',
    run.tags.join(',') || '-',
    run.lastError ? `${run.lastError.code}: ${run.lastError.message}`.slice(0, 60) : '',
  ];
}

export const ls: CommandModule = {
  name: 'ls',
  usage:
    'dura ls [--status S] [--tag T] [--tool T] [--since ISO] [--until ISO] [--sort ORDER] [--limit N] [--cursor C]',
  flags: {
    status: {
      type: 'string',
      multiple: true,
      value: 'S',
      description: `only runs in these statuses (${STATUSES.join(', ')}; comma-separated or repeated)`,
    },
    tag: {
      type: 'string',
      multiple: true,
      value: 'T',
      description: 'only runs with this tag (repeated: all of them)',
    },
    tool: { type: 'string', value: 'T', description: 'only runs that used this tool' },
    since: { type: 'string', value: 'ISO', description: 'only runs created after this time' },
    until: { type: 'string', value: 'ISO', description: 'only runs created before this time' },
    sort: { type: 'string', value: 'ORDER', description: `${SORTS.join(' | ')} (default updated_desc)` },
    limit: { type: 'string', value: 'N', description: 'runs per page, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', description: 'the next page, from the previous page' },
  },
  positionals: { min: 0, max: 0 },
  help: `Reads the projector's read API (--api). --json prints { runs, nextCursor }.

Examples:
  dura ls --status failed,cancelled --since 2025-01-01T00:00:00Z
  dura ls --tag team:payments --json`,
  async run(args, ctx) {
    const statuses = listFlag(args, 'status');
    const unknown = statuses.filter((s) => !STATUSES.includes(s));
    if (unknown.length > 0)
      throw new UsageError(`unknown --status ${unknown.join(', ')}; one of ${STATUSES.join(', ')}`);
    const sort = stringFlag(args, 'sort');
    if (sort !== undefined && !SORTS.includes(sort))
      throw new UsageError(`--sort must be one of ${SORTS.join(', ')}, got "${sort}"`);
    const filter: ListRunsFilter = {};
    if (statuses.length > 0) filter.status = statuses as RunSummary['status'][];
    const tags = listFlag(args, 'tag');
    if (tags.length > 0) filter.tag = tags;
    const tool = stringFlag(args, 'tool');
    if (tool !== undefined) filter.tool = tool;
    const since = isoFlag(args, 'since');
    if (since !== undefined) filter.createdAfter = since;
    const until = isoFlag(args, 'until');
    if (until !== undefined) filter.createdBefore = until;
    if (sort !== undefined) filter.sort = sort as NonNullable<ListRunsFilter['sort']>;
    const limit = intFlag(args, 'limit', { min: 1, max: 500 });
    if (limit !== undefined) filter.limit = limit;
    const cursor = stringFlag(args, 'cursor');
    if (cursor !== undefined) filter.cursor = cursor;

    const page = await ctx.client.listRuns(filter);
    if (ctx.json) {
      ctx.out.json(page);
      return EXIT.ok;
    }
    if (page.runs.length === 0) ctx.out.note('no runs match');
    else
      ctx.out.table(
        [
          'RUN',
          'STATUS',
          'AGENT',
          'PARENT',
          'COST',
          'STEPS',
          'PENDING',
          'CREATED',
          'UPDATED',
          'TAGS',
          'LAST ERROR',
        ],
        page.runs.map(row),
      );
    if (page.nextCursor !== undefined)
      ctx.out.note(`next page: the same command with --cursor ${page.nextCursor}`);
    return EXIT.ok;
  },
};
