// Fork with edited state, end to end: planner, tool-gateway and projector as separate processes, every charge
// going through the payment witness, forks asked for through @dura/client and through the `dura` CLI.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { idempotencyKey, jsonHash } from '@dura/core';
import {
  keyOf,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { dura, eventually, getJson } from './system';

const crash = useCrashSystem(['tool-gateway', 'projector', 'planner']);

/** Charge 100, then charge again what the first charge's answer says it charged. */
function chargeTwice(runId: string): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'pay.charge', args: { amount: 100 } },
        { tool: 'pay.charge', args: { amount: '$steps.1.amount' } },
      ],
    },
  };
}

async function completed(sys: CrashSystem, request: PlanRequest): Promise<RunEvent[]> {
  await sys.submit(request);
  const log = await watchToEnd(sys, request.runId);
  expect(log.at(-1)?.type, `${request.runId} completes`).toBe('run_completed');
  await eventually(
    async () => {
      const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${request.runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === log.at(-1)!.seq ? true : undefined;
    },
    `the projection of ${request.runId}`,
    30_000,
  );
  return log;
}

const resultOf = (log: RunEvent[], callId: string) =>
  log.find((e) => e.type === 'tool_call_completed' && e.data.callId === callId)!;

const step2Key = (runId: string, amount: number) =>
  idempotencyKey({ runId, step: 2, tool: 'pay.charge', args: { amount } });

describe('a fork with an edited tool result', () => {
  it('continues from the edited value, and the edited call is not charged again', async () => {
    const sys = crash();
    const source = chargeTwice('edit-e2e-src');
    const sourceLog = await completed(sys, source);
    const observed = resultOf(sourceLog, 'call-1');
    const original = observed.type === 'tool_call_completed' ? observed.data.result : null;
    const key1 = keyOf(source, 1);
    expect(sys.witness.requests(key1)).toBe(1);

    const client = createDuraClient(sys.system);
    const { runId } = await client.forkRun({
      sourceRunId: source.runId,
      atSeq: observed.seq,
      runId: 'edit-e2e-new',
      edit: { toolResult: { callId: 'call-1', output: { chargeId: 'ch_edited', amount: 700 } } },
      editedBy: 'alice',
    });
    const forkLog = await watchToEnd(sys, runId);
    expect(forkLog.at(-1)).toMatchObject({ type: 'run_completed', data: { output: { amount: 700 } } });

    // The witness saw call 1 once (from the source) and the fork's step 2 charged the edited amount, once.
    expect(sys.witness.requests(key1), 'the edited call never reached the witness again').toBe(1);
    expect(sys.witness.effects(key1)).toBe(1);
    expect(sys.witness.effects(step2Key(runId, 700))).toBe(1);
    const forkCharges = sys.witness.keys().filter((key) => key.startsWith(`${runId}:`));
    expect(forkCharges).toEqual([step2Key(runId, 700)]);

    const copy = resultOf(forkLog, 'call-1');
    expect(copy.data).toMatchObject({
      idempotencyKey: key1,
      result: { chargeId: 'ch_edited', amount: 700 },
      edited: {
        by: 'alice',
        sourceRunId: source.runId,
        sourceSeq: observed.seq,
        originalSha256: jsonHash(original),
      },
    });
    expect(await logOf(sys, source.runId)).toEqual(sourceLog);
  });
});

describe('dura fork with edits', () => {
  it('--tool-result from a file and --input follow the fork to its end, and a bad edit exits 5 sending nothing', async () => {
    const sys = crash();
    const source = chargeTwice('edit-cli-src');
    const sourceLog = await completed(sys, source);
    const observed = resultOf(sourceLog, 'call-1');
    const dir = await mkdtemp(join(tmpdir(), 'dura-fork-edit-'));
    try {
      const file = join(dir, 'result.json');
      await writeFile(file, JSON.stringify({ chargeId: 'ch_cli', amount: 300 }));
      const forked = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        String(observed.seq),
        '--tool-result',
        `call-1=@${file}`,
        '--by',
        'cli-tester',
        '--run-id',
        'edit-cli-new',
        '--follow',
      ]);
      expect(forked.output).toContain(
        `forked ${source.runId} at seq ${observed.seq} into edit-cli-new with edited result of call-1 (by cli-tester)`,
      );
      expect(forked.output).toMatch(/^run edit-cli-new completed$/m);
      expect(forked.code).toBe(0);
      expect(sys.witness.effects(step2Key('edit-cli-new', 300))).toBe(1);
      expect(sys.witness.requests(keyOf(source, 1))).toBe(1);

      const withInput = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        String(sourceLog[0]!.seq),
        '--input',
        '{"note": "edited"}',
        '--by',
        'cli-tester',
        '--run-id',
        'edit-cli-input',
        '--follow',
      ]);
      expect(withInput.code).toBe(0);
      expect((await logOf(sys, 'edit-cli-input'))[0]).toMatchObject({
        data: { request: { input: { note: 'edited' } }, forkOf: { edited: { by: 'cli-tester', input: {} } } },
      });

      const late = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        String(resultOf(sourceLog, 'call-2').seq),
        '--tool-result',
        'call-1={"amount": 1}',
        '--run-id',
        'edit-cli-late',
      ]);
      expect(late.output).toContain('from the recorded result of call call-1');
      expect(late.output).toContain('[fork_edit_invalid]');
      expect(late.code).toBe(5);
      expect(await logOf(sys, 'edit-cli-late')).toEqual([]);
      const malformed = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        '1',
        '--tool-result',
        '{"amount": 1}',
      ]);
      expect(malformed.output).toContain('--tool-result takes CALL_ID=JSON or CALL_ID=@file');
      expect(malformed.code).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
