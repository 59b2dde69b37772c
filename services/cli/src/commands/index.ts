/**
 * The `dura` command registry: every subcommand is one file in this folder, added to `COMMANDS` below with ONE
 * line (its name, its one-line summary for `dura --help`, and how to load it):
 *
 *     { name: 'replay', summary: 'Fold a run again, event by event', load: async () => (await import('./replay')).replay },
 *
 * Root `--help` lists the commands in this order. A command's module is imported only when that command runs
 * (or prints its own `--help`), so `dura --help` and every other command never load its imports.
 *
 * A command module exports one `CommandModule` (src/command.ts):
 *
 *     import { EXIT, type CommandModule } from '../command';
 *     import { intFlag, positional } from '../args';
 *
 *     export const replay: CommandModule = {
 *       name: 'replay',                             // the word after `dura`, the same as in COMMANDS
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
import type { CommandEntry } from '../command';

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'run', summary: 'Submit a run and follow it, printing each event, until it ends', load: async () => (await import('./run')).run },
  { name: 'watch', summary: "Follow a run's events live, from the start or from a seq, until it ends", load: async () => (await import('./watch')).watch },
  { name: 'get', summary: "Show a run's state now, or as it was after the event at a seq", load: async () => (await import('./get')).get },
  { name: 'events', summary: "List a run's events (one page) from the read API", load: async () => (await import('./events')).events },
  { name: 'ls', summary: 'List runs, newest update first, filtered by status, tag, tool or time', load: async () => (await import('./ls')).ls },
  { name: 'signal', summary: 'Send a named signal (with an optional JSON payload) to a run', load: async () => (await import('./signal')).signal },
  { name: 'cancel', summary: 'Cancel a run (the planner records run_cancelled with the reason)', load: async () => (await import('./cancel')).cancel },
  { name: 'replay', summary: 'Re-drive a run from its log, running nothing, and report the first divergence', load: async () => (await import('./replay')).replay },
  { name: 'fork', summary: "Start a new run from a run's log up to a seq, and let the planner drive it from there", load: async () => (await import('./fork')).fork },
  { name: 'diff', summary: 'Compare two runs decision by decision and show where they first differ', load: async () => (await import('./diff')).diff },
  { name: 'approve', summary: 'Approve what the run waits for: a call awaiting approval, or a ctx.approve verdict', load: async () => (await import('./approve')).approve },
  { name: 'limits', summary: 'Show model limits and concurrency keys: declared, available now, in use, waiting, throttled', load: async () => (await import('./limits')).limits },
  { name: 'mcp', summary: 'Serve Dura as an MCP server (stdio, or Streamable HTTP with --http)', load: async () => (await import('./mcp')).mcp },
  { name: 'reject', summary: 'Reject what the run waits for: the model (or the code) sees the refusal and its reason', load: async () => (await import('./approve')).reject },
  { name: 'schedule', summary: 'Recurring runs: create, ls, get, pause, resume, trigger, delete', load: async () => (await import('./schedule')).schedule },
  { name: 'why', summary: "Show why an event happened: it, its cause, its cause's cause, back to the request", load: async () => (await import('./why')).why },
];
