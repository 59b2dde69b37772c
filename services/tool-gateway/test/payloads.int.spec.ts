import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import type { JsonObject } from '@dura/contracts';
import { createPayloadStore } from '@dura/payloads';
import { useTestInfra } from '@dura/testing';
import { defineTool } from '@dura/tools';
import { effectRow, publishTask, settledLog, toolTask } from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const THRESHOLD = 4096;
const seen: JsonObject[] = [];
const report = defineTool({
  name: 'test.report',
  description: 'returns a report of `size` characters and echoes the arguments it got',
  input: z.object({ size: z.number().int(), blob: z.string().optional() }),
  safety: 'idempotent',
  execute({ size, blob }) {
    seen.push({ size, blobLength: blob?.length ?? 0 });
    return Promise.resolve({ summary: 'ok', body: 'r'.repeat(size) });
  },
});

const infra = useTestInfra();
const sys = useGateway(infra, [report], { payloadThresholdBytes: THRESHOLD });

describe('large payloads', () => {
  it('keeps a small result inline and moves a large one to the object store, hash and size in the event', async () => {
    const small = toolTask('run-payload-small', 'test.report', { size: 10 });
    const large = toolTask('run-payload-large', 'test.report', { size: 50_000 });
    await publishTask(sys.setup, small);
    await publishTask(sys.setup, large);
    const smallLog = await settledLog(sys.setup, small.runId, `${small.idempotencyKey}:result`);
    const largeLog = await settledLog(sys.setup, large.runId, `${large.idempotencyKey}:result`);

    const inline = smallLog.at(-1)!.event;
    expect(inline).toMatchObject({ type: 'tool_call_completed', data: { result: { body: 'r'.repeat(10) } } });
    expect(inline.type === 'tool_call_completed' && inline.data.resultRef).toBeUndefined();

    const offloaded = largeLog.at(-1)!.event;
    if (offloaded.type !== 'tool_call_completed') throw new Error(`unexpected ${offloaded.type}`);
    expect(offloaded.data.result).toBeNull();
    const ref = offloaded.data.resultRef!;
    expect(ref.uri).toBe(`dura-obj://dura_payloads/${ref.sha256}`);
    expect(JSON.stringify(offloaded).length).toBeLessThan(THRESHOLD);
    const stored = await createPayloadStore({ js: sys.setup.js }).getJson(ref);
    expect(stored).toEqual({ summary: 'ok', body: 'r'.repeat(50_000) });
    expect(ref.size).toBe(Buffer.byteLength(JSON.stringify(stored)));
    // The ledger keeps the whole result: a repeat builds the same observation, reference included.
    expect((await effectRow(sys.setup.db, large.idempotencyKey))?.result).toEqual(stored);
  });

  it('fetches arguments passed by reference before the tool sees them', async () => {
    const store = createPayloadStore({ js: sys.setup.js });
    const args = { size: 1, blob: 'b'.repeat(20_000) };
    const argsRef = await store.putJson(args);
    const task = { ...toolTask('run-payload-args', 'test.report', { $payload: argsRef.uri }), argsRef };
    await publishTask(sys.setup, task);
    await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
    expect(seen).toContainEqual({ size: 1, blobLength: 20_000 });
  });
});
