// Hostile messages for every subject the services consume (hostile-inputs.e2e.spec.ts): nesting thousands of
// levels deep, NUL and lone surrogates, bytes that are not UTF-8, strings, arrays and objects over the limits.
// Each says which dead letter it must end in, with which code and which run id.
import fc from 'fast-check';
import { MESSAGE_LIMITS, SUBJECTS, toolTaskSubject } from '@dura/contracts';

export type Door = 'submit' | 'fork' | 'signal' | 'decide' | 'tool' | 'timer';
export type Hostility =
  | 'deep'
  | 'raw-nul'
  | 'nul-not-utf8'
  | 'escaped-nul'
  | 'lone-surrogate'
  | 'long-string'
  | 'long-array'
  | 'many-keys';

export interface HostileMessage {
  door: Door;
  hostility: Hostility;
  subject: string;
  body: Uint8Array;
  /** The run the message names at its top level: its dead letter must name it too. */
  runId: string;
  /** The dead letter's source and code. */
  source: string;
  code: string;
}

export const HOSTILITIES: readonly Hostility[] = [
  'deep',
  'raw-nul',
  'nul-not-utf8',
  'escaped-nul',
  'lone-surrogate',
  'long-string',
  'long-array',
  'many-keys',
];

const SOURCES: Record<Door, string> = {
  submit: 'requests',
  fork: 'forks',
  signal: 'signals',
  decide: 'decide',
  tool: 'tool-tasks',
  timer: 'timer-tasks',
};

const encoder = new TextEncoder();

/** A deep nesting as text (no recursion ever builds it): arrays or objects, `levels` deep, sampled per seed. */
function deepText(seed: number): string {
  const [[levels, kind]] = fc.sample(
    fc.tuple(fc.integer({ min: 2_000, max: 6_000 }), fc.constantFrom('array', 'object')),
    { seed, numRuns: 1 },
  ) as [[number, 'array' | 'object']];
  return kind === 'array'
    ? `${'['.repeat(levels)}1${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** The hostile value as JSON text bytes (some are not valid JSON, or not UTF-8, on purpose). */
function hostileValue(hostility: Hostility, seed: number): Uint8Array {
  switch (hostility) {
    case 'deep':
      return encoder.encode(deepText(seed));
    case 'raw-nul':
      return encoder.encode('"a\u0000b"');
    case 'nul-not-utf8':
      return new Uint8Array([0x22, 0x61, 0x00, 0xff, 0xfe, 0xc3, 0x22]);
    case 'escaped-nul':
      return encoder.encode('"a\\u0000b"');
    case 'lone-surrogate':
      return encoder.encode('"a\\ud800b"');
    case 'long-string':
      return encoder.encode(JSON.stringify('s'.repeat(MESSAGE_LIMITS.maxStringBytes + 1)));
    case 'long-array':
      return encoder.encode(`[${'0,'.repeat(MESSAGE_LIMITS.maxArrayLength)}0]`);
    case 'many-keys':
      return encoder.encode(
        `{${Array.from({ length: MESSAGE_LIMITS.maxObjectKeys + 1 }, (_, i) => `"k${i}":0`).join(',')}}`,
      );
  }
}

/** The body of a message through `door`, with `value` in its data field; the run id first or last. */
function bodyOf(door: Door, runId: string, value: Uint8Array, runIdFirst: boolean): Uint8Array {
  const fields: Record<Door, string> = {
    submit: `"v":1,"agent":{"kind":"scripted","steps":[]},"input":`,
    fork: `"v":1,"sourceRunId":"hx-no-such-source","atSeq":1,"note":`,
    signal: `"v":1,"signalId":"hx-signal","name":"note","payload":`,
    decide: `"v":1,"afterSeq":1,"reason":"signal","note":`,
    tool: `"v":1,"callId":"c-1","step":1,"tool":"echo","idempotencyKey":"k","causationId":"c","correlationId":"c","args":`,
    timer: `"v":1,"waitId":"w-1","dueAt":"2026-01-01T00:00:00Z","causationId":"c","correlationId":"c","trace":`,
  };
  const runIdField = `"runId":"${runId}"`;
  const head = runIdFirst ? `{${runIdField},${fields[door]}` : `{${fields[door]}`;
  const tail = runIdFirst ? '}' : `,${runIdField}}`;
  return new Uint8Array([...encoder.encode(head), ...value, ...encoder.encode(tail)]);
}

/** The code a dead letter gives for `hostility` at `door`: requests keep their own codes for bad JSON and schema. */
function codeOf(door: Door, hostility: Hostility): string {
  const request = door === 'submit' || door === 'fork';
  switch (hostility) {
    case 'deep':
      return 'too_deep';
    case 'raw-nul':
      return request ? 'bad_json' : 'contract_violation';
    case 'nul-not-utf8':
      return 'invalid_utf8';
    case 'escaped-nul':
    case 'lone-surrogate':
      return request ? 'invalid_request' : 'contract_violation';
    case 'long-string':
      return 'string_too_long';
    case 'long-array':
      return 'array_too_long';
    case 'many-keys':
      return 'too_many_keys';
  }
}

/**
 * Every hostility through every door. Runs named by requests (submit, fork) are new ones, `hx-<door>-<n>`;
 * the others name `target`, a live run they must leave untouched.
 */
export function hostileMessages(target: string, seed: number): HostileMessage[] {
  const doors: Door[] = ['submit', 'fork', 'signal', 'decide', 'tool', 'timer'];
  return doors.flatMap((door) =>
    HOSTILITIES.map((hostility, i): HostileMessage => {
      const runId = door === 'submit' || door === 'fork' ? `hx-${door}-${i}` : target;
      const subject =
        door === 'tool'
          ? toolTaskSubject('echo')
          : {
              submit: SUBJECTS.submit,
              fork: SUBJECTS.fork,
              signal: SUBJECTS.signal,
              decide: SUBJECTS.decideTask,
              timer: SUBJECTS.timerTask,
            }[door];
      const body = bodyOf(door, runId, hostileValue(hostility, seed + i), (seed + i) % 2 === 0);
      return { door, hostility, subject, body, runId, source: SOURCES[door], code: codeOf(door, hostility) };
    }),
  );
}
