import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  DeadLetterSchema,
  DecideTaskSchema,
  RunIdSchema,
  SUBJECTS,
  ToolTaskSchema,
  deadLetterSubject,
  runIdFromSubject,
  runSubject,
  toolTaskSubject,
} from '../src/index';

const arbRunId = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/);

describe('subjects', () => {
  it('a run id survives its subject and back', () => {
    fc.assert(
      fc.property(arbRunId, (runId) => {
        expect(RunIdSchema.safeParse(runId).success).toBe(true);
        expect(runSubject(runId)).toBe(`dura.run.${runId}`);
        expect(runIdFromSubject(runSubject(runId))).toBe(runId);
      }),
    );
  });

  it.each(['dura.run', 'dura.run.', 'dura.run.a.b', 'dura.task.decide', 'other.run.a', 'dura.runx.a'])(
    'finds no run id in %s',
    (subject) => {
      expect(runIdFromSubject(subject)).toBeUndefined();
    },
  );

  it('every run subject is matched by the stream filter, and tool tasks by theirs', () => {
    expect(SUBJECTS.allRuns).toBe('dura.run.*');
    expect(toolTaskSubject('http.request')).toBe('dura.task.tool.http.request');
    expect(toolTaskSubject('http.request').startsWith(SUBJECTS.allToolTasks.replace('>', ''))).toBe(true);
    expect(deadLetterSubject('planner')).toBe('dura.dlq.planner');
  });
});

describe('task and dead-letter schemas', () => {
  const task = {
    v: 1,
    runId: 'run-1',
    callId: 'call-1',
    step: 1,
    tool: 'http.request',
    args: { url: 'https://x' },
    idempotencyKey: 'run-1:1:http.request:abc',
    causationId: 'evt-4',
    correlationId: 'run-1',
  };

  it('accept a tool task and a decide task', () => {
    expect(ToolTaskSchema.parse(task)).toEqual(task);
    const decide = { v: 1, runId: 'run-1', afterSeq: 12, reason: 'observation' };
    expect(DecideTaskSchema.parse(decide)).toEqual(decide);
  });

  it('refuse a tool task without a key or at step 0, and a decide task for an unknown reason', () => {
    const { idempotencyKey: _k, ...keyless } = task;
    expect(ToolTaskSchema.safeParse(keyless).success).toBe(false);
    expect(ToolTaskSchema.safeParse({ ...task, step: 0 }).success).toBe(false);
    expect(DecideTaskSchema.safeParse({ v: 1, runId: 'run-1', afterSeq: 1, reason: 'whim' }).success).toBe(
      false,
    );
  });

  it('accept a dead letter carrying the bytes and the issues', () => {
    const letter = {
      v: 1,
      source: 'planner',
      subject: 'dura.run.run-1',
      streamSeq: 17,
      deliveries: 5,
      error: { code: 'contract_violation', message: 'event at seq 17 has unknown type "x"' },
      issues: ['type: unknown event type "x"'],
      payload: '{"type":"x"}',
      payloadEncoding: 'utf8',
      runId: 'run-1',
      at: '2025-03-01T10:00:00.000Z',
    };
    expect(DeadLetterSchema.parse(letter)).toEqual(letter);
    expect(DeadLetterSchema.safeParse({ ...letter, payloadEncoding: 'hex' }).success).toBe(false);
  });
});
