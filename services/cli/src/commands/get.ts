import type { RunState } from '@dura/core';
import { intFlag, positional } from '../args';
import { waitStep } from '@dura/client';
import { EXIT, type CommandContext, type CommandModule, type Output } from '../command';
import { rejectionIssues } from '../follow';

/** A run's state as aligned `field  value` lines, then one line per call. */
export function printState(out: Output, state: RunState): void {
  const fields: [string, string][] = [
    ['run', state.runId ?? '-'],
    ['status', state.status + (state.waiting ? `, for ${describeWait(state.waiting)}` : '')],
    ['steps', String(state.steps)],
    ['last seq', String(state.lastSeq)],
    ['events', String(state.eventCount)],
    ['created', state.createdAt ?? '-'],
    ['updated', state.updatedAt ?? '-'],
    ['tokens', `${state.usage.inputTokens} in, ${state.usage.outputTokens} out`],
    ['cost', formatUsd(state.budget.costUsd)],
  ];
  if (state.output !== undefined) fields.push(['output', JSON.stringify(state.output)]);
  if (state.error) fields.push(['error', `${state.error.code}: ${state.error.message}`]);
  out.table(['field', 'value'], fields);
  if (state.calls.length === 0) return;
  out.line();
  out.table(
    ['call', 'step', 'tool', 'status', 'attempts', 'result'],
    state.calls.map((call) => [
      call.callId,
      String(call.step),
      call.tool,
      call.status,
      String(call.attempts),
      clip(call.error ? `${call.error.code}: ${call.error.message}` : JSON.stringify(call.result ?? null)),
    ]),
  );
}

/** US dollars with enough digits for a cheap model call ($0.000120), never in exponent form. */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(usd > 0 && usd < 0.01 ? 6 : 4)}`;
}

/**
 * Why the run is where it is, beyond the fold: the issues of a rejection, what resolves a wait, and the
 * agent version a parked run waits for. Lines for the human view.
 */
async function explain(ctx: CommandContext, state: RunState): Promise<string[]> {
  const runId = state.runId ?? '';
  if (state.status === 'rejected') {
    const events = await ctx.client.readEvents(runId);
    const rejected = events.find((e) => e.type === 'run_rejected');
    return rejected ? ['issues:', ...rejectionIssues(rejected)] : [];
  }
  if (state.waiting?.kind === 'timer' && state.waiting.reason)
    return [
      `waiting: ${state.waiting.reason} (until ${state.waiting.until ?? '?'}; nothing is held meanwhile)`,
    ];
  if (state.waiting) {
    const step = waitStep(runId, state.waiting);
    return step ? [`next: ${step}`] : [];
  }
  if (state.status === 'running' || state.status === 'pending') {
    const parked = await ctx.client.parkedFor(runId);
    if (parked)
      return [
        `parked: no running planner serves ${parked.agent}@${parked.version}, the version this run is pinned to; ` +
          `start a planner whose agents (DURA_AGENTS) include it, and the run resumes at seq ${parked.afterSeq + 1}`,
      ];
  }
  return [];
}

function describeWait(wait: NonNullable<RunState['waiting']>): string {
  switch (wait.kind) {
    case 'approval':
      return `approval of ${wait.callId ?? 'a call'}`;
    case 'signal':
      return wait.approval ? `a verdict (signal ${wait.signal ?? '?'})` : `the signal ${wait.signal ?? '?'}`;
    case 'timer':
      // A wait for capacity (model limits, concurrency keys) names the limit it waits on.
      return wait.reason
        ? `${wait.reason}, until ${wait.until ?? '?'}`
        : `a timer, until ${wait.until ?? '?'}`;
    case 'child':
      return `the child run ${wait.childRunId ?? '?'}`;
    case 'operator':
      return wait.callId ? `an operator, on ${wait.callId}` : 'an operator (the code stopped)';
    case 'budget':
      return 'more budget';
  }
}

function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export const get: CommandModule = {
  name: 'get',
  usage: 'dura get <run-id> [--at SEQ]',
  flags: {
    at: {
      type: 'string',
      value: 'SEQ',
      description: 'the state after this seq (the fold of the events up to it)',
    },
  },
  positionals: { min: 1, max: 1 },
  help: `Without --at, the state is the fold of the run's log read from NATS (always current). With --at, it
comes from the read API (--api): the same fold over the events with seq <= SEQ.
After the state, what explains it: for a waiting run the command that resolves the wait, for a rejected
run every issue (unknown tools, invalid arguments), for a running run that is parked the agent version no
running planner serves. --json prints the state (with --at: { runId, at, state }).

Exit code: 0 when the run exists, whatever its status; 3 when it does not (or has no event at or before SEQ).`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const at = intFlag(args, 'at', { min: 1 });
    if (at === undefined) {
      const state = await ctx.client.getRun(runId);
      if (ctx.json) {
        ctx.out.json(state);
        return EXIT.ok;
      }
      printState(ctx.out, state);
      const why = await explain(ctx, state);
      if (why.length > 0) ctx.out.line();
      for (const line of why) ctx.out.line(line);
      return EXIT.ok;
    }
    const past = await ctx.client.stateAt(runId, at);
    if (ctx.json) ctx.out.json(past);
    else {
      ctx.out.line(`as of seq ${past.at}:`);
      printState(ctx.out, past.state);
    }
    return EXIT.ok;
  },
};
