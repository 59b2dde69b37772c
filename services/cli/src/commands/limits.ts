import { LIMIT_COLUMNS, limitCells } from '@dura/core';
import { EXIT, type CommandModule } from '../command';

export const limits: CommandModule = {
  name: 'limits',
  usage: 'dura limits',
  flags: {},
  positionals: { min: 0, max: 0 },
  help: `Reads the projector's read API (--api, GET /flow/limits): every model limit the planners declare
(DURA_MODEL_LIMITS) or that calls used, and every concurrency key of runs, with its state now. "available now"
is the share of each rate's bucket a call may take at once (below 0%: tickets handed out ahead); "waiting"
counts callers in line by tenant and callers waiting for a slot. A warning on stderr names a limit whose
replicas declare different figures (a misconfiguration to fix). --json prints { at, limits, warnings }. See docs/flow-control.md.

Examples:
  dura limits
  dura limits --json`,
  async run(_args, ctx) {
    const view = await ctx.client.flowLimits();
    if (ctx.json) ctx.out.json(view);
    else if (view.limits.length === 0)
      ctx.out.note('no limits: no planner declares DURA_MODEL_LIMITS and no run holds a concurrency key');
    else
      ctx.out.table(
        LIMIT_COLUMNS.map((column) => column.toUpperCase()),
        view.limits.map(limitCells),
      );
    for (const warning of view.warnings) ctx.out.error(`warning: ${warning}`);
    return EXIT.ok;
  },
};
