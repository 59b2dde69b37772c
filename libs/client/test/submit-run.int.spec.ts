import { describe, expect, it } from 'vitest';
import { ContractViolation, RunRequestSchema, STREAMS, SUBJECTS } from '@dura/contracts';
import type { SubmitRunInput } from '../src/index';
import { useClientFixture } from './infra';

const fixture = useClientFixture();
const agent = { kind: 'scripted' as const, steps: [{ tool: 'echo', args: { n: 1 } }] };

async function storedRequests(): Promise<number> {
  return (await fixture().jsm.streams.info(STREAMS.requests)).state.messages;
}

async function lastRequest() {
  const msg = await fixture().jsm.streams.getMessage(STREAMS.requests, { last_by_subj: SUBJECTS.submit });
  if (!msg) throw new Error('no request stored');
  return { body: RunRequestSchema.parse(msg.json()), msgId: msg.header.get('Nats-Msg-Id') };
}

describe('submitRun', () => {
  it.each([
    [
      'a bad tool name',
      { agent: { kind: 'scripted', steps: [{ tool: 'Deploy Rocket', args: {} }] } },
      /^agent\.steps\.0\.tool: /,
    ],
    ['a run id that is not one subject token', { runId: 'a.b', agent }, /^runId: .*subject token/],
    ['no agent', {}, /^agent: /],
    ['an unknown request version', { v: 9, agent }, /^v: /],
  ])(
    'refuses a request with %s with a ContractViolation listing the issues, and publishes nothing',
    async (_, input, issue) => {
      const before = await storedRequests();

      const error = await fixture()
        .client.submitRun(input as unknown as SubmitRunInput)
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ContractViolation);
      expect(error).toMatchObject({ code: 'contract_violation', retryable: false });
      expect((error as ContractViolation).issues).toEqual([expect.stringMatching(issue)]);
      expect(await storedRequests()).toBe(before);
    },
  );

  it('generates a run id when none is given, and publishes the request under it', async () => {
    const first = await fixture().client.submitRun({ agent, input: { ticket: 'OPS-1' } });
    expect(first).toEqual({ runId: expect.stringMatching(/^run_[0-9a-f]{32}$/), duplicate: false });
    expect(await lastRequest()).toEqual({
      body: { v: 1, runId: first.runId, agent, input: { ticket: 'OPS-1' } },
      msgId: first.runId,
    });

    const second = await fixture().client.submitRun({ agent });
    expect(second.runId).not.toBe(first.runId);
  });

  it('keeps the caller’s run id and reports a resubmission of it as a duplicate that starts nothing', async () => {
    const before = await storedRequests();

    const request = { runId: 'deploy-42', agent, tags: ['web'], metadata: { team: 'web' } };
    const first = await fixture().client.submitRun(request);
    const again = await fixture().client.submitRun(request);
    // Even a different body under the same id is the same run: the first request stands.
    const changed = await fixture().client.submitRun({
      runId: 'deploy-42',
      agent: { kind: 'scripted', steps: [] },
    });

    expect(first).toEqual({ runId: 'deploy-42', duplicate: false });
    expect(again).toEqual({ runId: 'deploy-42', duplicate: true });
    expect(changed.duplicate).toBe(true);
    expect(await storedRequests()).toBe(before + 1);
    expect((await lastRequest()).body).toEqual({ v: 1, ...request });
  });
});
