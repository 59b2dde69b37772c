// Malformed and adversarial messages for every subject the services consume (fuzz-inputs.e2e.spec.ts).
// Each message says where it must end up: in the dead-letter stream under a source, or, for a run log
// (which only the projector reads, and which it may not publish from), in the projector's error table.
import fc from 'fast-check';
import {
  DecideTaskSchema,
  SUBJECTS,
  TimerTaskSchema,
  ToolTaskSchema,
  toolTaskSubject,
} from '@dura/contracts';
import type { z } from 'zod';

export type Outcome = { kind: 'dead_letter'; source: string } | { kind: 'projection_error' };

export interface FuzzMessage {
  subject: string;
  body: Uint8Array;
  headers?: Record<string, string>;
  outcome: Outcome;
}

const encoder = new TextEncoder();
type Body = Record<string, unknown>;

/** Strings an attacker or a broken client sends: control characters, lone surrogates, injections, padding. */
const arbNastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\u202eevil',
    '__proto__',
    'constructor',
    '../../etc/passwd',
    "'; drop table runs; --",
    '${jndi:ldap://x/a}',
    'dura.run.*',
    'dura.>',
    ' ',
  ),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'x'.repeat(n)),
);

/** Any JSON value, weighted towards the wrong types a field can be given. */
export const arbWrongValue: fc.Arbitrary<unknown> = fc.oneof(
  arbNastyString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, [], {}, [null], { $ne: 1 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** JSON text with `__proto__` / `constructor` keys that a careless merge would turn into prototype pollution. */
export function withPollutionKeys(text: string, key: '__proto__' | 'constructor'): string {
  if (!text.startsWith('{')) return text;
  const poison = JSON.stringify({ polluted: true, prototype: { polluted: true } });
  return `{"${key}":${poison}${text.length > 2 ? ',' : ''}${text.slice(1)}`;
}

/** A valid body broken in one or more ways; bodies the schema still accepts are filtered out by the caller. */
function arbBroken(template: () => Body): fc.Arbitrary<string> {
  const keys = Object.keys(template());
  const mutation = fc.oneof(
    fc.constantFrom(...keys).map((key) => (b: Body) => void delete b[key]),
    fc.tuple(fc.constantFrom(...keys), arbWrongValue).map(
      ([key, value]) =>
        (b: Body) =>
          void (b[key] = value),
    ),
    fc.constantFrom(0, 2, 99, '1', null, 1.5).map((v) => (b: Body) => void (b['v'] = v)),
  );
  const structured = fc
    .tuple(
      fc.array(mutation, { minLength: 1, maxLength: 3 }),
      fc.option(fc.constantFrom<'__proto__' | 'constructor'>('__proto__', 'constructor')),
    )
    .map(([mutations, pollute]) => {
      const body = template();
      for (const mutate of mutations) mutate(body);
      const text = JSON.stringify(body);
      return pollute ? withPollutionKeys(text, pollute) : text;
    });
  const notJson = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.nat().map((n) => JSON.stringify(template()).slice(0, n % JSON.stringify(template()).length)),
    fc.constantFrom('', '{', '{"v":1,}', 'NaN', '{"v":1} trailing', "{'v':1}", '[1,2', '\u0000', '\ufeff{}'),
  );
  const notObject = fc
    .jsonValue({ maxDepth: 2 })
    .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
    .map((v) => JSON.stringify(v));
  return fc.oneof(
    { weight: 6, arbitrary: structured },
    { weight: 2, arbitrary: notJson },
    { weight: 1, arbitrary: notObject },
  );
}

/** Bytes that are not UTF-8 at all. */
export const arbBinary = fc
  .uint8Array({ minLength: 1, maxLength: 300 })
  .map((bytes) => Uint8Array.from([0xff, 0xfe, ...bytes]));

function failsSchema(schema: z.ZodType, text: string): boolean {
  try {
    return !schema.safeParse(JSON.parse(text)).success;
  } catch {
    return true;
  }
}

const arbHeaders = fc.option(
  fc.record(
    {
      traceparent: fc.oneof(
        fc.string({ maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')),
        fc.constant('00-zzzz-zzzz-01'),
      ),
      'Dura-Event-Type': fc.constantFrom('run_completed', 'nonsense', ''),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

interface Target {
  subject: (i: number) => string;
  outcome: Outcome;
  bodies: fc.Arbitrary<Uint8Array>;
  /** A valid body, for mutations built outside the arbitrary. */
  template: () => Body;
}

function target(
  subject: (i: number) => string,
  source: string,
  template: () => Body,
  accepted?: z.ZodType,
): Target {
  const broken = arbBroken(template);
  const text = accepted ? broken.filter((t) => failsSchema(accepted, t)) : broken;
  return {
    subject,
    template,
    outcome: { kind: 'dead_letter', source },
    bodies: fc.oneof(
      { weight: 9, arbitrary: text.map((t) => encoder.encode(t)) },
      { weight: 1, arbitrary: arbBinary },
    ),
  };
}

let counter = 0;
export const unique = (prefix: string): string => `${prefix}-${(counter += 1)}`;

/**
 * Targets and the templates their bodies are broken from. Run ids in them are fresh (`fz-...`), never those
 * of the valid runs. Submit, signal and fork bodies the schema accepts are still refused (an unknown tool, a
 * run or source that does not exist): every one is dead-lettered. Decide, tool and timer bodies are
 * filtered to those the schema refuses.
 */
export const TARGETS: Record<string, Target> = {
  submit: target(
    () => SUBJECTS.submit,
    'requests',
    () => ({
      v: 1,
      runId: unique('fz-sub'),
      agent: { kind: 'scripted', steps: [{ tool: 'fuzz.absent', args: { amount: 1 } }] },
      input: 'x',
    }),
  ),
  signal: target(
    () => SUBJECTS.signal,
    'signals',
    () => ({
      v: 1,
      runId: unique('fz-sig'),
      signalId: 's-1',
      name: 'approve',
      payload: { ok: true },
    }),
  ),
  fork: target(
    () => SUBJECTS.fork,
    'forks',
    () => ({
      v: 1,
      sourceRunId: unique('fz-nosource'),
      atSeq: 1,
      runId: unique('fz-fork'),
    }),
  ),
  decide: target(
    () => SUBJECTS.decideTask,
    'decide',
    () => ({
      v: 1,
      runId: unique('fz-dec'),
      afterSeq: 1,
      reason: 'observation',
    }),
    DecideTaskSchema,
  ),
  tool: target(
    (i) => toolTaskSubject(['pay.charge', 'pay.checked', 'fuzz.absent', 'x'][i % 4] as string),
    'tool-tasks',
    () => toolTaskBody('pay.charge'),
    ToolTaskSchema,
  ),
  timer: target(
    () => SUBJECTS.timerTask,
    'timer-tasks',
    () => ({
      v: 1,
      runId: unique('fz-tim'),
      waitId: 'w-1',
      dueAt: '2099-01-01T00:00:00.000Z',
      causationId: 'c',
      correlationId: 'c',
    }),
    TimerTaskSchema,
  ),
};

function toolTaskBody(tool: string): Body {
  const runId = unique('fz-tool');
  return {
    v: 1,
    runId,
    callId: 'call-1',
    step: 1,
    tool,
    args: { amount: 1 },
    idempotencyKey: `${runId}:1:${tool}`,
    causationId: 'c',
    correlationId: runId,
  };
}

/**
 * Well-formed tool tasks published on another tool's subject: a subject a publisher may be allowed to use
 * must not carry a task for a tool it may not call.
 */
export function mismatchedToolTasks(count: number): FuzzMessage[] {
  return Array.from({ length: count }, (_, i) => {
    const [onSubject, inBody] = i % 2 === 0 ? ['fuzz.absent', 'pay.charge'] : ['pay.charge', 'pay.checked'];
    return {
      subject: toolTaskSubject(onSubject),
      body: encoder.encode(JSON.stringify(toolTaskBody(inBody))),
      outcome: { kind: 'dead_letter', source: 'tool-tasks' },
    };
  });
}

/** `count` bad messages for one target, reproducibly from `seed`. */
export function sampleTarget(name: keyof typeof TARGETS, count: number, seed: number): FuzzMessage[] {
  const t = TARGETS[name] as Target;
  const drawn = fc.sample(fc.tuple(t.bodies, arbHeaders), { seed, numRuns: count });
  return drawn.map(([body, headers], i) => ({
    subject: t.subject(i),
    body,
    ...(headers ? { headers } : {}),
    outcome: t.outcome,
  }));
}

/**
 * A valid body of every target with one field replaced by a nesting thousands of levels deep (a few KB of
 * brackets: deeper than any recursive decoder's stack), reproducibly from `seed`. Each must be refused on
 * its first delivery, like any bad message, never retried as if the service had a passing problem.
 */
export function deeplyNested(count: number, seed: number): FuzzMessage[] {
  const names = Object.keys(TARGETS);
  const arb = fc.tuple(
    fc.constantFrom(...names),
    fc.integer({ min: 1_000, max: 8_000 }),
    fc.constantFrom('[', '{"a":'),
    fc.nat(),
  );
  return fc.sample(arb, { seed, numRuns: count }).map(([name, levels, open, pick], i) => {
    const t = TARGETS[name] as Target;
    const body = t.template();
    const keys = Object.keys(body).filter((key) => key !== 'runId' && key !== 'v');
    const field = keys[pick % keys.length] ?? 'input';
    const close = open === '[' ? ']' : '}';
    const deep = `${open.repeat(levels)}0${close.repeat(levels)}`;
    body[field] = '\u0001DEEP\u0001';
    const text = JSON.stringify(body).replace('"\\u0001DEEP\\u0001"', deep);
    return { subject: t.subject(i), body: encoder.encode(text), outcome: t.outcome };
  });
}
