import { RunNotFound } from '@dura/client';
import { intFlag, positional } from '../args';
import { EXIT, type CommandModule } from '../command';

export const events: CommandModule = {
  name: 'events',
  usage: 'dura events <run-id> [--from SEQ] [--limit N]',
  flags: {
    from: { type: 'string', value: 'SEQ', description: 'first seq of the page (default: the first event)' },
    limit: { type: 'string', value: 'N', description: 'events per page, 1..1000 (default 100)' },
  },
  positionals: { min: 1, max: 1 },
  help: `One readable line per event; --json prints { events, nextFromSeq }. When more events follow, the
next page starts at nextFromSeq (dura events <id> --from <nextFromSeq>).

Exit code: 0; 3 when the read API has no events of the run (a run submitted a moment ago may not be
projected yet).`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const fromSeq = intFlag(args, 'from', { min: 1 });
    const limit = intFlag(args, 'limit', { min: 1, max: 1000 });
    const page = await ctx.client.events(runId, {
      ...(fromSeq === undefined ? {} : { fromSeq }),
      ...(limit === undefined ? {} : { limit }),
    });
    if (page.events.length === 0 && fromSeq === undefined)
      throw new RunNotFound(
        runId,
        `the read API at ${ctx.apiUrl} has no events of run ${runId}: check the id (dura ls)`,
      );
    if (ctx.json) {
      ctx.out.json(page);
      return EXIT.ok;
    }
    for (const event of page.events) ctx.out.event(event);
    if (page.nextFromSeq !== undefined) ctx.out.note(`more: dura events ${runId} --from ${page.nextFromSeq}`);
    return EXIT.ok;
  },
};
