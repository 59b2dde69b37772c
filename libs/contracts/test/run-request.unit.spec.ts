import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  JsonValueSchema,
  RunIdSchema,
  RunRequestSchema,
  SignalRequestSchema,
  ToolNameSchema,
  formatIssues,
} from '../src/index';

const valid = {
  v: 1,
  runId: 'deploy-web_42',
  agent: {
    kind: 'scripted',
    steps: [
      { tool: 'build.image', args: { repo: 'acme/web', ref: 'main' } },
      { tool: 'deploy.service', args: { image: '$steps.1.imageTag', env: '$input.env' } },
    ],
    output: { deployed: true },
  },
  input: { env: 'staging' },
  tags: ['nightly', 'web'],
  metadata: { team: 'web', ticket: 'OPS-1' },
};

/** The readable issues zod reports for `value`. */
function issuesOf(value: unknown): string[] {
  const parsed = RunRequestSchema.safeParse(value);
  expect(parsed.success).toBe(false);
  return parsed.success ? [] : formatIssues(parsed.error);
}

describe('RunRequestSchema', () => {
  it('accepts a scripted request', () => {
    expect(RunRequestSchema.parse(valid)).toEqual(valid);
  });

  it('accepts the minimal request: no run id (the service assigns one), no input, no steps', () => {
    expect(RunRequestSchema.safeParse({ v: 1, agent: { kind: 'scripted', steps: [] } }).success).toBe(true);
  });

  it('refuses a run id with a dot: it would split the NATS subject', () => {
    expect(issuesOf({ ...valid, runId: 'deploy.web' })).toEqual([
      'runId: run id may contain only letters, digits, "_" and "-" (it becomes a NATS subject token)',
    ]);
  });

  it.each(['', 'a b', 'a*', 'a>', 'x'.repeat(129), 'ünïcode'])('refuses the run id %j', (runId) => {
    expect(issuesOf({ ...valid, runId })[0]).toMatch(/^runId: /);
  });

  it('refuses a parallel group in an inline plan with a message that says where parallel groups belong', () => {
    const steps = [
      { tool: 'echo', args: {} },
      {
        parallel: [
          { tool: 'echo', args: { n: 1 } },
          { tool: 'echo', args: { n: 2 } },
        ],
      },
    ];
    expect(issuesOf({ ...valid, agent: { kind: 'scripted', steps } })).toEqual([
      'agent.steps.1: a "parallel" group is not an inline plan step: send one call per step ({"tool", "args"}), or define a scripted agent with parallel groups in an agents file (docs/agents.md)',
    ]);
  });

  it('refuses an unknown agent kind', () => {
    expect(issuesOf({ ...valid, agent: { kind: 'llm', model: 'gpt-x' } })).toEqual([
      "agent.kind: Invalid discriminator value. Expected 'scripted' | 'agent'",
    ]);
  });

  it('accepts a registered agent by name, with or without a version, and budgets that tighten it', () => {
    expect(
      RunRequestSchema.safeParse({ ...valid, agent: { kind: 'agent', name: 'researcher' } }).success,
    ).toBe(true);
    const pinned = RunRequestSchema.parse({
      ...valid,
      agent: { kind: 'agent', name: 'researcher', version: '2' },
      budget: { maxSteps: 10, maxCostUsd: 0.5 },
    });
    expect(pinned.agent).toEqual({ kind: 'agent', name: 'researcher', version: '2' });
    expect(pinned.budget).toEqual({ maxSteps: 10, maxCostUsd: 0.5 });
    expect(issuesOf({ ...valid, agent: { kind: 'agent', name: 'Bad Name' } })).toEqual([
      'agent.name: agent name must be lower-case letters, digits, ".", "_" or "-"',
    ]);
    expect(issuesOf({ ...valid, budget: { maxSteps: 0 } })).toEqual([
      'budget.maxSteps: Too small: expected number to be >0',
    ]);
  });

  it('refuses a request without v, or of another version', () => {
    const { v: _v, ...withoutV } = valid;
    expect(issuesOf(withoutV)).toEqual(['v: Invalid input: expected 1']);
    expect(issuesOf({ ...valid, v: 2 })).toEqual(['v: Invalid input: expected 1']);
  });

  it('points at the bad step', () => {
    const steps = [
      valid.agent.steps[0],
      { tool: 'Deploy Service', args: {} },
      { tool: 'http.request', args: [] },
    ];
    expect(issuesOf({ ...valid, agent: { kind: 'scripted', steps } })).toEqual([
      'agent.steps.1.tool: tool name must be dotted lower-case words, e.g. "http.request"',
      'agent.steps.2.args: Invalid input: expected record, received array',
    ]);
  });

  it('refuses non-string metadata and a missing agent', () => {
    expect(issuesOf({ ...valid, metadata: { team: 1 } })).toEqual([
      'metadata.team: Invalid input: expected string, received number',
    ]);
    expect(issuesOf({ v: 1 })).toEqual(['agent: Invalid input: expected object, received undefined']);
  });

  it('refuses tags given as key/value pairs, saying where the pairs go now', () => {
    expect(issuesOf({ ...valid, tags: { team: 'web' } })).toEqual([
      'tags: tags must be a list of strings; put key/value pairs in metadata',
    ]);
  });

  it('bounds tags (20, each 1 to 64 characters) and metadata (50 keys)', () => {
    expect(RunRequestSchema.safeParse({ ...valid, tags: Array(20).fill('x'.repeat(64)) }).success).toBe(true);
    expect(issuesOf({ ...valid, tags: Array(21).fill('a') })).toEqual(['tags: a run has at most 20 tags']);
    expect(issuesOf({ ...valid, tags: ['ok', '', 'y'.repeat(65)] })).toEqual([
      'tags.1: a tag must not be empty',
      'tags.2: a tag has at most 64 characters',
    ]);
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expect(RunRequestSchema.safeParse({ ...valid, metadata: keys(50) }).success).toBe(true);
    expect(issuesOf({ ...valid, metadata: keys(51) })).toEqual(['metadata: metadata has at most 50 keys']);
  });
});

describe('identifier schemas', () => {
  it('run ids are exactly the single NATS subject tokens made of letters, digits, _ and -', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 130 }), (text) => {
        const ok = /^[A-Za-z0-9_-]{1,128}$/.test(text);
        expect(RunIdSchema.safeParse(text).success).toBe(ok);
      }),
      { numRuns: 500 },
    );
  });

  it.each(['http.request', 'a', 'deploy.service_v2', 'x-1.y-2'])('accepts the tool name %s', (tool) => {
    expect(ToolNameSchema.safeParse(tool).success).toBe(true);
  });

  it.each(['', 'Http.request', 'http..request', '.http', 'http.', '1http', 'http request', 'http.*'])(
    'refuses the tool name %j',
    (tool) => {
      expect(ToolNameSchema.safeParse(tool).success).toBe(false);
    },
  );

  it('JSON values accept any JSON and refuse what JSON cannot carry', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JsonValueSchema.safeParse(value).success).toBe(true);
      }),
    );
    for (const bad of [undefined, NaN, Infinity, () => 1, new Map(), 1n, { a: undefined }]) {
      expect(JsonValueSchema.safeParse(bad).success).toBe(false);
    }
  });
});

describe('SignalRequestSchema', () => {
  it('accepts a named signal with a payload and refuses one without a run id', () => {
    const signal = { v: 1, runId: 'run-1', signalId: 'sig-1', name: 'approve', payload: { by: 'ana' } };
    expect(SignalRequestSchema.parse(signal)).toEqual(signal);
    const { runId: _r, ...noRun } = signal;
    expect(SignalRequestSchema.safeParse(noRun).success).toBe(false);
    expect(SignalRequestSchema.safeParse({ ...signal, name: '' }).success).toBe(false);
  });
});
