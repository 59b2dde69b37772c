/**
 * The `dura` command registry: every subcommand is one file in this folder, added here with ONE line:
 *
 *     export { replay } from './replay';
 *
 * The CLI (src/registry.ts) collects every export of this module, so nothing else needs to change; root
 * `--help` lists the commands in the order of `PREFERRED_ORDER` there, then the rest alphabetically.
 *
 * A command module exports one `CommandModule` (src/command.ts):
 *
 *     import { EXIT, type CommandModule } from '../command';
 *     import { intFlag, positional } from '../args';
 *
 *     export const replay: CommandModule = {
 *       name: 'replay',                             // the word after `dura`
 *       summary: 'Fold a run again, event by event', // one line in `dura --help`
 *       usage: 'dura replay <id> [--to SEQ]',       // usage lines, global flags left out
 *       help: 'Examples:\n  dura replay run_1 --to 12', // optional text after the flags in `dura replay --help`
 *       flags: { to: { type: 'string', value: 'SEQ', description: 'stop at this seq' } },
 *       positionals: { min: 1, max: 1 },            // checked before run(): a wrong count exits 2
 *       async run(args, ctx) {                      // args: { positionals, flags } (own flags only)
 *         const runId = positional(args, 0, 'run id');
 *         const to = intFlag(args, 'to', { min: 1 }); // UsageError (exit 2) on a bad value
 *         const page = await ctx.client.events(runId, { limit: 500 });
 *         if (ctx.json) ctx.out.json(page);           // --json: one JSON document (jsonLine for streams)
 *         else for (const e of page.events) ctx.out.event(e);
 *         return EXIT.ok;                             // the process exit code
 *       },
 *     };
 *
 * The CLI handles `--help` (built from name, usage, flags, help), the global flags (`--nats`, `--api`,
 * `--json`), unknown flags (exit 2), and maps what `run` throws to exit codes: `UsageError` → 2, a
 * `DuraError` whose code ends in `not_found` → 3, `nats_unreachable` / `api_unreachable` → 4, anything else
 * → 5, each printed on stderr with what to do. `ctx` gives:
 *   - `client`: the SDK (`@dura/client`); NATS connects on first use, read-API calls go to `--api`;
 *   - `json`: whether `--json` was given;
 *   - `out`: `line`, `json`, `jsonLine`, `table`, `event` (readable line or JSON line), `note`/`error` (stderr);
 *   - `natsUrl`, `apiUrl`, and `signal` (aborted on Ctrl-C: stop following and return).
 * Flag helpers (src/args.ts): `stringFlag`, `listFlag`, `booleanFlag`, `intFlag`, `jsonFlag`, `isoFlag`,
 * `positional`. Exit codes: `EXIT` in src/command.ts.
 */
export { run } from './run';
export { watch } from './watch';
export { get } from './get';
export { events } from './events';
export { ls } from './ls';
export { signal } from './signal';
export { cancel } from './cancel';
export { replay } from './replay';
export { fork } from './fork';
export { diff } from './diff';
export { approve, reject } from './approve';
export { schedule } from './schedule';
export { mcp } from './mcp';
export { why } from './why';
export { limits } from './limits';
