import { DuraError, type Decision, type JsonValue, type PinnedVersion, type RunEvent } from '@dura/contracts';
import { canonicalJson, type EventDraft, type RunState } from '@dura/core';
import {
  decideNext,
  decodeJournal,
  type AnyCodeAgent,
  type CodeStep,
  type Fresh,
  type JournalEntry,
} from '@dura/code-agents';
import type { ToolRegistry } from '@dura/tools';
import { withCodeAgents } from './agents/code-agent-model';
import { codeTurnOf } from './agents/code-turn';
import type { CodeTurn, DecideInput, Model } from './model';
import { isPlannerEvent } from './replay-compare';

export interface ReplayCodeDeps {
  /** The code agents to re-run (the module given to `dura replay --agents`). */
  agents: readonly AnyCodeAgent[];
  /** Decides every other run (JSON agents, scripted plans). */
  base: Model;
  /** The run's log: each step's recorded values (`ctx.now()`, `ctx.random()`, `ctx.uuid()`, `ctx.model`). */
  events: readonly RunEvent[];
  tools?: ToolRegistry;
}

/**
 * The planner's model for replaying a code agent's run: pinned and budgeted by `withCodeAgents` (as the
 * planner serving the same module), and each step decided by re-running the agent's code against the log
 * prefix, with the values the step recorded in its thought standing in for fresh ones. `ctx.model` is
 * answered from that journal (no model is asked); a request whose hash differs from the recorded one is
 * non-determinism, which `plannerStep` turns into the operator wait the driver would append. A step maps to
 * its turn by `codeTurnOf` (the mapping `withCodeAgents` makes of the steps it decides).
 */
export function replayCodeAgents(deps: ReplayCodeDeps): Model {
  const served = withCodeAgents({
    agents: deps.agents,
    base: deps.base,
    ...(deps.tools ? { tools: deps.tools } : {}),
  });
  return { ...served, code: (input) => replayCode(deps, input) };
}

/** Stand-ins for values past what the step recorded: the thought then differs from the log's. */
const UNRECORDED: Fresh = { now: () => 0, random: () => 0, uuid: () => 'unrecorded' };

async function replayCode(deps: ReplayCodeDeps, input: DecideInput): Promise<CodeTurn | undefined> {
  const pinned = input.state.pinned;
  if (pinned?.provider !== 'code') return undefined;
  const agent = deps.agents.find((a) => a.name === pinned.agent && a.version === pinned.version);
  if (!agent) throw codeAgentMissing(input.state.runId ?? input.request.runId, pinned, deps.agents);
  const recorded = recordedJournal(deps.events, input.state);
  const step: CodeStep = await decideNext(agent, input.state, {
    fresh: UNRECORDED,
    frontier: { step: input.state.turns.length, entries: recorded },
  });
  if (step.kind !== 'model') return codeTurnOf(step, deps.tools);
  // Every recorded answer was given: this is a model call the step did not make when it ran.
  return {
    kind: 'blocked',
    reason:
      `step ${input.state.turns.length + 1} of ${agent.name}@${agent.version} recorded no answer for ` +
      `ctx.model (request ${step.requestHash.slice(0, 12)}), which the code now asks for`,
  };
}

/** The values the step after `state` recorded: the journal of the thought the log holds next. */
function recordedJournal(events: readonly RunEvent[], state: RunState): JournalEntry[] {
  const next = events.find(
    (event) =>
      event.seq > state.lastSeq &&
      isPlannerEvent(event) &&
      event.type !== 'budget_reserved' &&
      event.type !== 'context_summarized',
  );
  return next?.type === 'thought' ? decodeJournal(next.data.content) : [];
}

/** What `run_started` pinned a run of a code agent to; undefined for any other run. */
export function codeAgentRunOf(events: readonly RunEvent[]): PinnedVersion | undefined {
  const started = events.find((event) => event.type === 'run_started');
  const pinned = started?.type === 'run_started' ? started.data.pinned : undefined;
  return pinned?.provider === 'code' ? pinned : undefined;
}

/** Why a code agent's run cannot be replayed with `agents`: its code is not among them. */
export function codeAgentMissing(
  runId: string,
  pinned: PinnedVersion,
  agents: readonly Pick<AnyCodeAgent, 'name' | 'version'>[] | undefined,
): DuraError {
  const ran = `run ${runId} ran code agent ${pinned.agent}@${pinned.version}`;
  if (agents === undefined)
    return new DuraError(
      'code_agent_not_given',
      `${ran}: its steps come from the agent's code, which replay re-runs against the log and cannot check ` +
        'without it; pass the module that defines it (dura replay <run> --agents <module>, as DURA_AGENTS)',
    );
  const defined = agents.map((a) => `${a.name}@${a.version}`).join(', ') || 'no code agent';
  return new DuraError(
    'code_agent_not_given',
    `${ran}, which the given agents do not define (they define ${defined}); ` +
      'pass the module that defines that version',
  );
}

const SHOWN = 200;

function shown(value: JsonValue | undefined): string {
  const text = value === undefined ? 'nothing' : canonicalJson(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

function callText(call: { tool: string; args: JsonValue }): string {
  return `${call.tool} ${shown(call.args)}`;
}

function endText(decision: Decision): string {
  if (decision.kind === 'complete')
    return decision.output === undefined ? 'to finish' : `to finish with ${shown(decision.output)}`;
  if (decision.kind === 'fail') return `to fail (${decision.error.code}: ${decision.error.message})`;
  return decision.kind;
}

function entryText(entry: JournalEntry | undefined): string {
  if (entry === undefined) return 'nothing more';
  if (entry.k === 'model') return `ctx.model (request ${entry.h.slice(0, 12)})`;
  return `ctx.${entry.k}() = ${shown(entry.v)}`;
}

/** The first call (or end) where two decisions differ: [recorded, now], or undefined when they agree. */
function firstCallDifference(recorded: Decision, now: Decision): [string, string] | undefined {
  const callsOf = (d: Decision) => (d.kind === 'tool_calls' ? d.calls : []);
  const was = callsOf(recorded);
  const is = callsOf(now);
  for (let i = 0; i < Math.max(was.length, is.length); i += 1) {
    const a = was[i];
    const b = is[i];
    if (a && b && a.tool === b.tool && canonicalJson(a.args) === canonicalJson(b.args)) continue;
    const inStep = recorded.kind === 'tool_calls' && now.kind === 'tool_calls';
    const none = inStep ? 'no further call in this step' : undefined;
    return [
      a ? callText(a) : (none ?? endText(recorded)),
      b ? `asks ${callText(b)}` : none ? `asks ${none}` : `asks ${endText(now)}`,
    ];
  }
  if (recorded.kind !== 'tool_calls' && canonicalJson(recorded) !== canonicalJson(now))
    return [endText(recorded), `asks ${endText(now)}`];
  return undefined;
}

/**
 * A code agent's divergence in its own terms: the step (1-based, as the engine counts them), what the log
 * recorded there and what the code asks for now, e.g. `step 2: recorded pay.charge {"amount":2}, the code
 * now asks pay.checked {"amount":2}`. Undefined when the difference is not one of the code's calls or values
 * (the generic reason, naming the path that differs, stands then).
 */
export function describeCodeDivergence(
  state: RunState,
  expected: EventDraft | undefined,
  event: RunEvent,
): { step: number; reason: string } | undefined {
  if (state.pinned?.provider !== 'code') return undefined;
  const number = state.turns.length + 1;
  const at = (reason: string) => ({ step: number, reason: `step ${number}: ${reason}` });
  if (expected?.type === 'wait_requested' && expected.data.waitId.startsWith('operator:code:'))
    return at(expected.data.reason ?? 'the code cannot be driven by the log');
  if (
    expected?.type === 'thought' &&
    event.type === 'wait_requested' &&
    event.data.waitId.startsWith('operator:code:')
  ) {
    const now = expected.data.decision;
    const asks = now.kind === 'tool_calls' ? now.calls.map(callText).join(', ') : endText(now);
    return at(
      `the log stopped the code here (${event.data.reason ?? 'non-determinism'}); the code now asks ${asks}`,
    );
  }
  if (expected?.type !== 'thought' || event.type !== 'thought') return undefined;
  const now = expected.data;
  const call = firstCallDifference(event.data.decision, now.decision);
  if (call) return at(`recorded ${call[0]}, the code now ${call[1]}`);
  const was = decodeJournal(event.data.content);
  const is = decodeJournal(now.content);
  for (let i = 0; i < Math.max(was.length, is.length); i += 1) {
    if (JSON.stringify(was[i] ?? null) === JSON.stringify(is[i] ?? null)) continue;
    const asked =
      is[i] === undefined ? 'asks nothing more' : `asks ${entryText(is[i]).replace(/ = .*$/, '')}`;
    return at(`recorded ${entryText(was[i])} (value ${i + 1} of the step), the code now ${asked}`);
  }
  return undefined;
}
