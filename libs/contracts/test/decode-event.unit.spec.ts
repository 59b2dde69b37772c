import { describe, expect, it } from 'vitest';
import {
  CURRENT_EVENT_VERSIONS,
  ContractViolation,
  DuraError,
  EVENT_TYPES,
  EventDataSchemas,
  decodeEvent,
  isEventType,
  newEvent,
  type EventType,
} from '../src/index';
import { SAMPLE_DATA, sampleMeta } from './sample-events';

const wire = (type: string, v: unknown, data: unknown, meta: unknown = sampleMeta()) => ({
  type,
  v,
  data,
  meta,
});

/** The ContractViolation `decodeEvent` throws for `raw`. */
function violation(raw: unknown, seq = 7): ContractViolation {
  try {
    decodeEvent(raw, seq);
  } catch (error) {
    expect(error).toBeInstanceOf(ContractViolation);
    expect(error).toBeInstanceOf(DuraError);
    expect(error).toMatchObject({ code: 'contract_violation', retryable: false, name: 'ContractViolation' });
    return error as ContractViolation;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
}

describe('event catalogue', () => {
  it('has a schema, a current version and a sample for every type', () => {
    expect(Object.keys(CURRENT_EVENT_VERSIONS).sort()).toEqual([...EVENT_TYPES].sort());
    expect(Object.keys(SAMPLE_DATA).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) expect(isEventType(type)).toBe(true);
    expect(isEventType('toString')).toBe(false);
    expect(isEventType('__proto__')).toBe(false);
  });
});

describe('decodeEvent of current versions', () => {
  it.each(EVENT_TYPES)(
    '%s survives JSON on the wire unchanged, with its sequence stamped on',
    (type: EventType) => {
      const event = newEvent(type, SAMPLE_DATA[type] as never, sampleMeta());
      expect(event.v).toBe(CURRENT_EVENT_VERSIONS[type]);
      const decoded = decodeEvent(JSON.parse(JSON.stringify(event)), 42);
      expect(decoded).toEqual({ ...event, seq: 42 });
    },
  );

  it('accepts meta without the optional causation and trace', () => {
    const meta = { id: 'e', runId: 'r', ts: '2025-03-01T10:00:00+01:00', correlationId: 'r' };
    expect(decodeEvent(wire('run_started', 1, {}, meta), 1).meta).toEqual(meta);
  });

  it('drops unknown fields rather than carrying them along', () => {
    const decoded = decodeEvent(wire('timer_fired', 1, { waitId: 'w', extra: 1 }), 1);
    expect(decoded.data).toEqual({ waitId: 'w' });
  });
});

describe('decodeEvent refuses what is not the contract, with ContractViolation and readable issues', () => {
  it('an unknown type', () => {
    const error = violation(wire('run_exploded', 1, {}));
    expect(error.message).toBe('event at seq 7 has unknown type "run_exploded"');
    expect(error.issues).toEqual(['type: unknown event type "run_exploded"']);
    expect(violation(wire('constructor', 1, {})).message).toMatch(/unknown type "constructor"/);
  });

  it('a version newer than this release understands', () => {
    const error = violation(wire('thought', 4, SAMPLE_DATA.thought));
    expect(error.message).toMatch(
      /thought\) is version 4, newer than this release understands \(3\); upgrade Dura/,
    );
    expect(error.issues).toEqual(['v: thought version 4 is newer than 3']);
  });

  it.each([
    ['null', null, ['(root): Invalid input: expected object, received null']],
    ['a string', 'run_started', ['(root): Invalid input: expected object, received string']],
    [
      'no type',
      { v: 1, data: {}, meta: sampleMeta() },
      ['type: Invalid input: expected string, received undefined'],
    ],
    ['an empty type', wire('', 1, {}), ['type: Too small: expected string to have >=1 characters']],
    ['a zero version', wire('run_started', 0, {}), ['v: Too small: expected number to be >0']],
    [
      'a fractional version',
      wire('run_started', 1.5, {}),
      ['v: Invalid input: expected int, received number'],
    ],
    [
      'a version as text',
      wire('run_started', '1', {}),
      ['v: Invalid input: expected number, received string'],
    ],
    [
      'no meta',
      { type: 'run_started', v: 1, data: {} },
      ['meta: Invalid input: expected object, received undefined'],
    ],
    [
      'a bad timestamp',
      wire('run_started', 1, {}, sampleMeta({ ts: 'yesterday' })),
      ['meta.ts: Invalid ISO datetime'],
    ],
    [
      'a run id with a dot',
      wire('run_started', 1, {}, sampleMeta({ runId: 'a.b' })),
      [expect.stringMatching(/^meta\.runId: run id may contain only/)],
    ],
  ])('a malformed envelope: %s', (_name, raw, issues) => {
    const error = violation(raw);
    expect(error.message).toBe('event at seq 7 has a malformed envelope');
    expect(error.issues).toEqual(issues);
  });

  it('invalid data of a current version, one issue per problem with its path', () => {
    const data = { callId: '', step: 0, tool: 'Deploy Service', args: [], idempotencyKey: 'k' };
    const error = violation(wire('tool_call_requested', 1, data));
    expect(error.message).toBe('event at seq 7 (tool_call_requested v1) has invalid data');
    expect(error.issues).toEqual([
      'callId: Too small: expected string to have >=1 characters',
      'step: Too small: expected number to be >0',
      'tool: tool name must be dotted lower-case words, e.g. "http.request"',
      'args: Invalid input: expected record, received array',
    ]);
  });

  it('a decision of an unknown kind', () => {
    const data = { ...SAMPLE_DATA.thought, decision: { kind: 'dance' } };
    expect(violation(wire('thought', 2, data)).issues).toEqual([expect.stringMatching(/^decision\.kind: /)]);
  });

  it('a non-JSON result', () => {
    const data = { ...SAMPLE_DATA.tool_call_completed, result: { when: new Date(0) } };
    expect(violation(wire('tool_call_completed', 1, data)).issues[0]).toMatch(/^result/);
  });

  it('every schema refuses what is not an object', () => {
    for (const type of EVENT_TYPES) expect(EventDataSchemas[type].safeParse('nope').success).toBe(false);
  });
});
