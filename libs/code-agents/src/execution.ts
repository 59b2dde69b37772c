import { DuraError, JsonValueSchema, type Decision } from '@dura/contracts';
import { nextCallId, type CallState, type RunState } from '@dura/core';
import type { AnyCodeAgent } from './define-agent';
import type { ModelAnswer } from './model-answer';
import { createCtx, type Intent, type Recorder } from './ctx-impl';
import { NonDeterminism, NotDrivenByCtx } from './errors';
import { describeIntent, requestHash, sameIntent } from './intent-match';
import { decodeJournal, describeEntry, type JournalEntry } from './journal';
import type { AdvanceOptions, CodeStep, Fresh, ModelAsk } from './code-step';
import { frontierThought } from './frontier-thought';
import { yieldToEventLoop } from './yield-to-event-loop';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
interface ParkedModel {
  slot: number;
  hash: string;
  ask: ModelAsk;
  answer: (value: ModelAnswer) => void;
}

/**
 * One live execution of a code agent's `run`, driven step by step by its run's log. A step is the batch of
 * intents the code asks for before it next waits; it matches the log's n-th decision. The planner may keep
 * an execution between decide tasks (a suspended continuation); a new one replays from the start.
 */
export class Execution implements Recorder {
  private turn = 0;
  private entries: (JournalEntry | undefined)[] = [];
  private cursor = 0;
  private atFrontier = false;
  private batch: Intent[] = [];
  private parked: ParkedModel[] = [];
  private outcome: Outcome | undefined;
  private stop: NonDeterminism | undefined;
  private fresh: Fresh | undefined;
  private started = false;
  private closed = false;
  private state: RunState | undefined;
  private frontier: readonly JournalEntry[] = [];

  constructor(
    readonly agent: AnyCodeAgent,
    readonly runId: string,
  ) {}

  get ended(): boolean {
    return this.closed || this.outcome !== undefined;
  }

  /** Runs the code as far as the log (`state`) answers it and says what the planner must do next. */
  async advance(state: RunState, options: AdvanceOptions): Promise<CodeStep> {
    if (this.closed) throw new DuraError('execution_closed', 'this execution has finished; start a new one');
    if (state.turns.length < this.turn)
      throw new DuraError('stale_execution', 'the log has fewer steps than this execution has replayed');
    this.state = state;
    this.fresh = options.fresh;
    this.frontier = options.frontier?.step === state.turns.length ? options.frontier.entries : [];
    if (this.started) this.resume();
    else {
      this.loadTurn();
      this.start(state);
    }
    for (;;) {
      await yieldToEventLoop();
      const step = this.settleStep(state);
      if (step !== 'next') return step;
    }
  }

  private start(state: RunState): void {
    this.started = true;
    const parsed = this.agent.input ? this.agent.input.safeParse(state.request?.input) : undefined;
    if (parsed && !parsed.success) {
      const secret = this.agent.secrets?.input ?? [];
      // A field declared secret arrives sealed: a schema expecting the clear value fails there.
      const hint =
        secret.length === 0
          ? ''
          : ` (fields declared secret, ${secret.join(', ')}, reach the code sealed: type them \`sealedSecret\` in the input schema)`;
      const message = `the input of ${this.agent.name}@${this.agent.version} is invalid: ${parsed.error.message}${hint}`;
      this.outcome = { ok: false, error: new DuraError('invalid_input', message) };
      return;
    }
    const input = (parsed ? parsed.data : state.request?.input) as never;
    const ctx = createCtx(this);
    Promise.resolve()
      .then(() => this.agent.run(ctx, input))
      .then(
        (value) => (this.outcome = { ok: true, value }),
        (error: unknown) => (this.outcome = { ok: false, error }),
      );
  }

  /** Loads the values step `turn` recorded, or those the frontier step already computed. */
  private loadTurn(): void {
    const turns = this.state?.turns ?? [];
    this.cursor = 0;
    this.atFrontier = this.turn >= turns.length;
    this.entries = this.atFrontier ? [...this.frontier] : decodeJournal(turns[this.turn]?.content);
  }

  /** A live execution picks up where it stopped: its decision recorded, or its model calls answered. */
  private resume(): void {
    const turns = this.state?.turns ?? [];
    if (!this.atFrontier) return;
    if (this.turn < turns.length) {
      // The decision this execution returned is in the log now: check it like any recorded step.
      this.atFrontier = false;
      this.entries = decodeJournal(turns[this.turn]?.content);
      return;
    }
    for (let i = 0; i < this.frontier.length; i += 1) this.entries[i] ??= this.frontier[i];
    while (this.parked[0]) {
      const model = this.parked[0];
      const entry = this.entries[model.slot];
      if (entry === undefined) break;
      this.parked.shift();
      this.answer(model, entry);
    }
  }

  private settleStep(state: RunState): CodeStep | 'next' {
    if (this.stop) return this.block(this.stop);
    if (this.parked[0]) {
      const first = this.parked[0];
      const frontier = this.entries.slice(0, first.slot).filter((e): e is JournalEntry => e !== undefined);
      const step = { step: this.turn, entries: frontier };
      return { kind: 'model', ...first.ask, requestHash: first.hash, frontier: step };
    }
    const finished = this.batch.length === 0 && this.outcome !== undefined;
    if (this.batch.length === 0 && !finished) return this.block(new NotDrivenByCtx(this.position()));
    const leftover = this.entries[this.cursor];
    if (leftover !== undefined) {
      const attempted = finished ? 'to finish' : this.batch.map(describeIntent).join(', ');
      return this.block(new NonDeterminism(this.position(), describeEntry(leftover), attempted));
    }
    if (this.atFrontier) {
      this.closed = this.batch.length === 0;
      const entries = this.entries.filter((e): e is JournalEntry => e !== undefined);
      return { kind: 'decide', thought: frontierThought(this.agent, state, entries, this.decision(state)) };
    }
    return this.replayStep(state);
  }

  /** The recorded step `turn`: the batch must be its calls; their outcomes answer the code. */
  private replayStep(state: RunState): CodeStep | 'next' {
    const callIds = state.turns[this.turn]?.callIds ?? [];
    const recorded = callIds.map((id) => state.calls.find((call) => call.callId === id));
    for (let i = 0; i < Math.max(recorded.length, this.batch.length); i += 1) {
      const call = recorded[i];
      const intent = this.batch[i];
      if (call && intent && sameIntent(call, intent)) continue;
      const was = call ? describeIntent(call) : 'no further call in this step';
      const now = intent
        ? describeIntent(intent)
        : this.batch.length === 0
          ? 'to finish'
          : 'no further call in this step';
      return this.block(new NonDeterminism(this.position(), was, now));
    }
    const calls = recorded as CallState[];
    const open = calls.filter((call) => call.status === 'pending' || call.status === 'unknown');
    if (open.length > 0) return { kind: 'suspended', waitingOn: open.map((call) => call.callId) };
    const order = calls
      .map((call, i) => ({ call, intent: this.batch[i] as Intent }))
      .sort((a, b) => (a.call.resolvedSeq ?? 0) - (b.call.resolvedSeq ?? 0));
    this.batch = [];
    this.turn += 1;
    this.loadTurn();
    for (const { call, intent } of order) intent.settle(call);
    return 'next';
  }

  private decision(state: RunState): Decision {
    if (this.batch.length > 0) {
      const calls = this.batch.map((intent, i) => ({
        callId: nextCallId(state, i),
        tool: intent.tool,
        args: intent.args,
        ...(intent.approval ? { approval: intent.approval } : {}),
      }));
      return { kind: 'tool_calls', calls };
    }
    const outcome = this.outcome as Outcome;
    if (!outcome.ok) return { kind: 'fail', error: errorInfo(outcome.error) };
    return this.completion(outcome.value);
  }

  private completion(value: unknown): Decision {
    const checked = this.agent.output?.safeParse(value);
    if (checked && !checked.success) return this.invalidOutput(checked.error.message);
    const json = JsonValueSchema.safeParse(checked ? checked.data : (value ?? null));
    if (!json.success) return this.invalidOutput('it is not JSON');
    return value === undefined ? { kind: 'complete' } : { kind: 'complete', output: json.data };
  }

  private invalidOutput(why: string): Decision {
    const message = `${this.agent.name}@${this.agent.version} returned an invalid output: ${why}`;
    return { kind: 'fail', error: { code: 'invalid_output', message } };
  }

  private block(error: NonDeterminism | NotDrivenByCtx): CodeStep {
    this.closed = true;
    return { kind: 'blocked', error };
  }

  private position(): string {
    return `step ${this.turn + 1} of ${this.agent.name}@${this.agent.version} (run ${this.runId})`;
  }

  intent(intent: Intent): void {
    if (!this.closed) this.batch.push(intent);
  }

  value(kind: 'now' | 'random' | 'uuid'): number | string {
    const entry = this.take(`ctx.${kind}()`);
    if (entry === undefined) {
      const fresh = this.fresh as Fresh;
      const v = kind === 'now' ? fresh.now() : kind === 'random' ? fresh.random() : fresh.uuid();
      const made = (kind === 'uuid' ? { k: kind, v } : { k: kind, v }) as JournalEntry;
      this.entries[this.cursor - 1] = made;
      return v;
    }
    if (entry.k === kind) return entry.v;
    this.stop ??= new NonDeterminism(this.position(), describeEntry(entry), `ctx.${kind}()`);
    return kind === 'uuid' ? '' : 0;
  }

  mark(name: string): void {
    const attempted = `ctx.mark(${JSON.stringify(name)})`;
    const entry = this.take(attempted);
    if (entry === undefined) {
      if (this.atFrontier && !this.closed) this.entries[this.cursor - 1] = { k: 'mark', v: name };
      return;
    }
    if (entry.k !== 'mark' || entry.v !== name)
      this.stop ??= new NonDeterminism(this.position(), describeEntry(entry), attempted);
  }

  model(ask: ModelAsk, answer: (value: ModelAnswer) => void): void {
    const hash = requestHash(ask.call ? ask.call.request : ask.request);
    const entry = this.take(`ctx.model (request ${hash.slice(0, 12)})`);
    const model = { slot: this.cursor - 1, hash, ask, answer };
    if (entry === undefined) this.parked.push(model);
    else this.answer(model, entry);
  }

  private answer(model: ParkedModel, entry: JournalEntry): void {
    if (entry.k === 'model' && entry.h === model.hash) model.answer(entry.a);
    else
      this.stop ??= new NonDeterminism(
        this.position(),
        describeEntry(entry),
        `ctx.model (request ${model.hash.slice(0, 12)})`,
      );
  }

  /**
   * The next slot of the step for a value or a model answer: the recorded one, or undefined at the frontier
   * (a fresh one is made). Past the end of a recorded step it is non-determinism.
   */
  private take(attempted: string): JournalEntry | undefined {
    if (this.closed) return undefined;
    const slot = this.cursor;
    this.cursor += 1;
    const entry = this.entries[slot];
    if (entry === undefined && !this.atFrontier) {
      const calls = this.state?.turns[this.turn]?.callIds.join(', ') ?? '';
      this.stop ??= new NonDeterminism(this.position(), `the step's calls (${calls}) next`, attempted);
    }
    return entry;
  }
}

/** Read by shape: a DuraError of another copy of `@dura/contracts` (a user's project has its own) keeps its code. */
function errorInfo(error: unknown): { code: string; message: string } {
  if (error instanceof DuraError) return { code: error.code, message: error.message };
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === 'string' && code !== '' ? code : 'agent_error', message: error.message };
  }
  return { code: 'agent_error', message: String(error) };
}
