import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ApiUnreachable, RunNotFound } from '@dura/client';
import type { PinnedVersion, RunEvent } from '@dura/contracts';
import type { loadAgents, PlannerModel, ReplayResult } from '@dura/agents';
import type { ToolRegistry } from '@dura/tools';
import { booleanFlag, positional, stringFlag } from '../args';
import { EXIT, UsageError, type CommandContext, type CommandModule } from '../command';

/** Imports `path` (relative to the working directory) and calls its `createModel()`. */
async function loadModel(path: string): Promise<PlannerModel> {
  const url = pathToFileURL(resolve(path)).href;
  let mod: { createModel?: unknown };
  try {
    mod = (await import(url)) as { createModel?: unknown };
  } catch (err) {
    throw new UsageError(`--model ${path} cannot be loaded (${(err as Error).message}); check the path`);
  }
  if (typeof mod.createModel !== 'function')
    throw new UsageError(
      `--model ${path} exports no createModel(); export function createModel(): PlannerModel (from @dura/agents)`,
    );
  const model = (await (mod.createModel as () => unknown)()) as Partial<PlannerModel> | null;
  if (typeof model?.decide !== 'function')
    throw new UsageError(
      `--model ${path}: createModel() returned no object with decide(); return a PlannerModel`,
    );
  return model as PlannerModel;
}

type Agents = Awaited<ReturnType<typeof loadAgents>>;

/** The agent definitions at `path` (a JSON file or a module of JSON and code agents, as `DURA_AGENTS`). */
async function agentsAt(path: string): Promise<Agents> {
  try {
    return await (await import('@dura/agents')).loadAgents(path);
  } catch (err) {
    throw new UsageError(`--agents ${path}: ${(err as Error).message}`);
  }
}

/** The tools the planner serves: the built-ins and the modules `list` names (as `DURA_TOOLS_MODULES`). */
async function toolsAt(list: string): Promise<ToolRegistry> {
  try {
    const { loadToolRegistry, toolModulesFrom } = await import('@dura/tools');
    return await loadToolRegistry(toolModulesFrom(list));
  } catch (err) {
    throw new UsageError(`--tools ${list}: ${(err as Error).message}`);
  }
}

/** The code agent a run was pinned to in `run_started`; undefined for any other run. */
function codeAgentOf(events: readonly RunEvent[]): PinnedVersion | undefined {
  const started = events.find((event) => event.type === 'run_started');
  const pinned = started?.type === 'run_started' ? started.data.pinned : undefined;
  return pinned?.provider === 'code' ? pinned : undefined;
}

/**
 * A code agent's run is re-derived only by re-running its code: without the module that defines the pinned
 * version there is nothing to check, and replay says so instead of reporting no divergence.
 */
function requireCode(
  runId: string,
  events: readonly RunEvent[],
  agents: Agents | undefined,
  path?: string,
): void {
  const pinned = codeAgentOf(events);
  if (!pinned) return;
  const ran = `run ${runId} ran code agent ${pinned.agent}@${pinned.version}`;
  if (agents === undefined || path === undefined)
    throw new UsageError(
      `${ran}: its steps come from the agent's code, which replay re-runs against the log and cannot ` +
        `check without it; pass the module that defines it: dura replay ${runId} --agents <module>`,
    );
  if (!agents.codeAgents.some((a) => a.name === pinned.agent && a.version === pinned.version)) {
    const defined = agents.codeAgents.map((a) => `${a.name}@${a.version}`).join(', ') || 'no code agent';
    throw new UsageError(
      `--agents ${path} does not define ${pinned.agent}@${pinned.version}, which ${runId} ran ` +
        `(it defines ${defined}); pass the module that defines that version`,
    );
  }
}

/** The projector's state of the run (GET /runs/<id>). */
async function projection(ctx: CommandContext, runId: string): Promise<unknown> {
  const url = `${ctx.apiUrl}/runs/${encodeURIComponent(runId)}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new ApiUnreachable(ctx.apiUrl, err);
  }
  if (response.status === 404)
    throw new RunNotFound(runId, `the read API at ${ctx.apiUrl} has not projected run ${runId} (yet)`);
  if (!response.ok) throw new ApiUnreachable(ctx.apiUrl, new Error(`GET ${url} answered ${response.status}`));
  return response.json();
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? 'nothing' : text;
}

function report(ctx: CommandContext, runId: string, result: ReplayResult): void {
  if (ctx.json) {
    ctx.out.json({ runId, ...result });
    return;
  }
  if (result.ok) {
    ctx.out.line(`no divergence (${result.checked} events checked)`);
    return;
  }
  ctx.out.line(`divergence at seq ${result.seq}: ${result.reason}`);
  // Named by where each value comes from: `expected` is what replay derives now (or the fold), `actual` what
  // the log holds (or the projector), and the reason reads "recorded …, the code now asks …".
  const [held, derived] = result.projection ? ['projector:', 'fold:     '] : ['recorded:', 'now:     '];
  ctx.out.line(`  ${held} ${result.actual === null ? 'nothing' : show(result.actual)}`);
  ctx.out.line(`  ${derived} ${result.expected === null ? 'nothing' : show(result.expected)}`);
  ctx.out.line(`(${result.checked} events replayed before it)`);
}

export const replay: CommandModule = {
  name: 'replay',
  usage: 'dura replay <run-id> [--agents FILE|MODULE [--tools MODULES]] [--model MODULE] [--projection]',
  flags: {
    agents: {
      type: 'string',
      value: 'FILE|MODULE',
      description:
        'agent definitions (as DURA_AGENTS: a JSON file, or a module of JSON and code agents) to check ' +
        'agent runs against: pins, budgets, scripted steps, and the code of code agents (required for them)',
    },
    tools: {
      type: 'string',
      value: 'MODULES',
      description:
        'with --agents: the tool modules the planner serves (its DURA_TOOLS_MODULES, comma-separated), for the ' +
        'approvals their definitions require and the tool schemas ctx.model and ctx.loop offer the model',
    },
    model: {
      type: 'string',
      value: 'MODULE',
      description: 'module exporting createModel(): the planner/model version to check the run against',
    },
    projection: {
      type: 'boolean',
      description: "also check the projector's state (GET /runs/<id> on --api) equals the fold of the log",
    },
  },
  positionals: { min: 1, max: 1 },
  help: `Reads the run's log from JetStream, folds it, and from every prefix asks the planner's decider (and
the model, when the decider would ask it) what the planner would append next; each recorded planner event
must be exactly that. Recorded observations and signals stand in for the world: no tool runs, nothing is
published. Compared: event types and data; not compared: ids, times, traces and token usage.
The model: scripted plans ask the scripted model again. Agent runs (JSON agents, scripted or LLM): with
--agents FILE (the planner's DURA_AGENTS, or the next version of it) each run is pinned and budgeted by those
definitions and agents with a scripted model are asked again, so a changed definition shows at run_started
or at the first step it decides differently; LLM answers come from the thoughts the log recorded. Without
--agents, agent runs keep the pin and reservations their log recorded.
Code agents (defineAgent): --agents MODULE (the module the planner serves with DURA_AGENTS, or a changed
version of it) is required; replay re-runs the code against the log, with the times, random numbers, ids
and model answers each step recorded (no model is asked), and reports the first call the code asks for
differently: "step 2: recorded pay.charge {...}, the code now asks pay.checked {...}". Without the module
a code agent's run is refused (exit 2): its decisions cannot be checked without its code.
--model MODULE replaces all of this with another model (a module exporting createModel(), e.g. the next
planner version). --json prints { runId, ok, checked, decisions } or the divergence { seq, expected,
actual, reason, step? }.

Examples:
  dura replay run_42
  dura replay run_42 --agents ./agents.next.json
  dura replay run_42 --agents ./agents.ts        # code agents: the module DURA_AGENTS names
  dura replay run_42 --agents ./agents.ts --tools ./tools.ts   # and the tools DURA_TOOLS_MODULES names
  dura replay run_42 --model ./planner-next/model.ts

Exit code: 0 no divergence; 1 the first divergence is printed; 3 when the run has no events.`,
  async run(args, ctx) {
    // The planner's code (agents, models, tools) is loaded when replay runs, not on every `dura` start.
    const { replayModelFor, replayRun } = await import('@dura/agents');
    const runId = positional(args, 0, 'run id');
    const modulePath = stringFlag(args, 'model');
    const agentsPath = stringFlag(args, 'agents');
    const agents = agentsPath === undefined ? undefined : await agentsAt(agentsPath);
    const toolsList = stringFlag(args, 'tools');
    if (toolsList !== undefined && agents === undefined)
      throw new UsageError(
        '--tools is read with --agents: without definitions a run keeps what its log recorded; ' +
          'add --agents <the planner DURA_AGENTS>',
      );
    const tools = toolsList === undefined ? undefined : await toolsAt(toolsList);
    let model = modulePath === undefined ? undefined : await loadModel(modulePath);
    const events = await ctx.client.readEvents(runId);
    if (events.length === 0) throw new RunNotFound(runId);
    if (model === undefined) requireCode(runId, events, agents, agentsPath);
    if (model === undefined && agents !== undefined)
      model = replayModelFor(events, {
        agents: agents.registry,
        codeAgents: agents.codeAgents,
        ...(tools ? { tools } : {}),
      });
    const projected = booleanFlag(args, 'projection') ? await projection(ctx, runId) : undefined;
    const result = await replayRun({
      events,
      ...(model === undefined ? {} : { model }),
      ...(projected === undefined ? {} : { projected }),
    });
    report(ctx, runId, result);
    return result.ok ? EXIT.ok : EXIT.runFailed;
  },
};
