import type { Decision, JsonValue, RunEvent } from '@dura/contracts';
import { canonicalJson } from './canonical-json';

/** One side of a divergence: the event where this run went its own way. */
export interface DiffSide {
  seq: number;
  type: 'thought' | 'tool_call_requested';
  summary: string;
}

/**
 * The first point where two runs decided differently. `step` is the step the decision is about (a thought
 * recorded after N steps decides step N + 1; an intent is its own step). A side is null when that run made
 * no further decision there (it ended, or its log stops).
 */
export interface RunDivergence {
  step: number;
  a: DiffSide | null;
  b: DiffSide | null;
}

interface Point extends DiffSide {
  step: number;
  /** What is compared: the decision's kind and content, or the intent's tool and arguments. */
  key: string;
}

const SUMMARY_JSON_LIMIT = 120;

/**
 * Compares two runs decision by decision: each thought's decision (kind; tools and arguments, output or
 * error) and each intent's tool and arguments, in log order. Ids, keys, sequences, times, usage and model
 * text are not compared, so a fork and its source agree wherever they decided the same. Pure.
 * Returns the first divergence, or null when every decision of both runs is the same.
 */
export function diffRuns(a: readonly RunEvent[], b: readonly RunEvent[]): RunDivergence | null {
  const left = decisionPoints(a);
  const right = decisionPoints(b);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const x = left[i];
    const y = right[i];
    if (x && y && x.type === y.type && x.key === y.key) continue;
    return { step: x?.step ?? y?.step ?? 0, a: x ? side(x) : null, b: y ? side(y) : null };
  }
  return null;
}

function decisionPoints(events: readonly RunEvent[]): Point[] {
  return events.flatMap((event): Point[] => {
    if (event.type === 'thought') {
      const decision = comparable(event.data.decision);
      return [
        {
          seq: event.seq,
          type: 'thought',
          step: event.data.step + 1,
          key: canonicalJson(decision),
          summary: describeDecision(event.data.decision),
        },
      ];
    }
    if (event.type === 'tool_call_requested') {
      const { step, tool, args } = event.data;
      return [
        {
          seq: event.seq,
          type: 'tool_call_requested',
          step,
          key: canonicalJson({ tool, args }),
          summary: `step ${step} ${tool} ${brief(args)}`,
        },
      ];
    }
    return [];
  });
}

/** The decision without call ids (they number steps, and are not a choice the model made). */
function comparable(decision: Decision): JsonValue {
  switch (decision.kind) {
    case 'tool_calls':
      return { kind: decision.kind, calls: decision.calls.map(({ tool, args }) => ({ tool, args })) };
    case 'complete':
      return decision.output === undefined ? { kind: decision.kind } : { ...decision };
    case 'fail':
      return { kind: decision.kind, error: { code: decision.error.code, message: decision.error.message } };
  }
}

function describeDecision(decision: Decision): string {
  switch (decision.kind) {
    case 'tool_calls':
      return `tool_calls ${decision.calls.map((call) => `${call.tool} ${brief(call.args)}`).join(', ')}`;
    case 'complete':
      return decision.output === undefined ? 'complete' : `complete ${brief(decision.output)}`;
    case 'fail':
      return `fail ${decision.error.code}: ${decision.error.message}`;
  }
}

function brief(value: JsonValue): string {
  const text = canonicalJson(value);
  return text.length <= SUMMARY_JSON_LIMIT ? text : `${text.slice(0, SUMMARY_JSON_LIMIT - 1)}…`;
}

function side(point: Point): DiffSide {
  return { seq: point.seq, type: point.type, summary: point.summary };
}
