// docs/flow-control.md, checked as written: its DURA_MODEL_LIMITS block is what the planner's configuration
// accepts, the figures the page gives (58 calls go, the 59th waits a second) are what admission computes, and
// its agent's concurrency key is the one a run starts under (or the refusal the page shows).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentRegistry, createAgentModel, type AgentsFile } from '@dura/agents';
import { emptyLimitRecord, limitsFor, takeTicket, type LimitRecord } from '@dura/core';
import { repoRoot } from '@dura/testing';
import { builtinRegistry } from '@dura/tools';
import { loadPlannerConfig } from '../src/index';

const doc = readFileSync(join(repoRoot(), 'docs/flow-control.md'), 'utf8');
const jsonBlocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
const textBlocks = [...doc.matchAll(/```text\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').trim());

describe('docs/flow-control.md', () => {
  it('given its DURA_MODEL_LIMITS, the planner loads two limits, and a call of a tenant counts against both', () => {
    const config = loadPlannerConfig({ DURA_MODEL_LIMITS: jsonBlocks[0] });
    expect(config.DURA_MODEL_LIMITS).toHaveLength(2);
    const applying = limitsFor(config.DURA_MODEL_LIMITS, 'openai/gpt-4o-mini', 'acme');
    expect(applying.map((entry) => entry.key)).toEqual(['openai/gpt-4o-mini', 'openai/gpt-4o-mini@acme']);
    expect(config.DURA_MODEL_LIMITS[0]?.weights).toEqual({ acme: 3 });
  });

  it('given 60 requests a minute, 58 calls asked at once go (2 s of headroom) and the 59th waits one second', () => {
    const limit = { model: 'openai/gpt-4o-mini', requestsPerMinute: 60 };
    let record: LimitRecord = emptyLimitRecord(0);
    const kinds = Array.from({ length: 59 }, (_, i) => {
      const taken = takeTicket(record, limit, { holder: `run-${i}:0`, inputTokens: 0, outputTokens: 0 }, 0);
      record = taken.record;
      return taken.outcome;
    });
    expect(kinds.filter((outcome) => outcome.kind === 'go')).toHaveLength(58);
    expect(kinds[58]).toEqual({ kind: 'at', at: 1_000, limit: 'requests per minute' });
  });

  it('given a malformed DURA_MODEL_LIMITS, the planner refuses to start and says what is wrong', () => {
    expect(() => loadPlannerConfig({ DURA_MODEL_LIMITS: '[{"model":"gpt-4o-mini"}]' })).toThrow(
      /provider\/model/,
    );
  });

  it("given its agents file, a run of customer 42 holds customer:42, another customer's its own, and an input without customerId is refused as the page shows", () => {
    const file = jsonBlocks.find((block) => block.includes('"agents"'));
    const model = createAgentModel({
      agents: new AgentRegistry(JSON.parse(file ?? 'null') as AgentsFile),
      tools: builtinRegistry(),
    });
    const start = (input: Record<string, number>) =>
      model.start({ v: 1, runId: 'doc-run', agent: { kind: 'agent', name: 'refunds' }, input });
    expect(start({ customerId: 42, amount: 10 }).concurrency).toEqual({ key: 'customer:42', limit: 1 });
    expect(start({ customerId: 7, amount: 5 }).concurrency).toEqual({ key: 'customer:7', limit: 1 });
    const refusal = textBlocks.find((text) => text.startsWith('agent refunds@1'));
    expect(refusal).toContain('input.customerId');
    expect(() => start({ amount: 10 })).toThrow(
      expect.objectContaining({
        code: 'concurrency_key_unresolved',
        message: refusal,
      }),
    );
  });
});
