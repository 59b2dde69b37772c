// Issue acceptance (secrets): a tool argument marked secret — given in the plan, and through the run's input —
// reaches the tool in clear, and is found nowhere else: in no message of any stream, no row of any table,
// no line the services logged (at debug level), and no span they exported. The tool's secret result field
// is sealed the same way.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { startOtlpReceiver, type OtlpReceiver } from '@dura/testing';
import { isSecretEnvelope } from '@dura/tools';
import { logOf, useCrashSystem, watchToEnd, WITNESS_TOOLS, type CrashSystem } from './crash-harness';

const SECRET_TOOLS = fileURLToPath(new URL('./fixtures/secret-tools.ts', import.meta.url));
const KEY = `k1:${randomBytes(32).toString('base64')}`;
// Random, so no fixture, default or earlier run can hold them by chance.
const PLAN_SECRET = `tok_plan_${randomBytes(12).toString('hex')}`;
const INPUT_SECRET = `tok_input_${randomBytes(12).toString('hex')}`;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const crash = useCrashSystem(['tool-gateway', 'projector', 'planner'], {
  env: () => ({
    DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${SECRET_TOOLS}`,
    DURA_SECRETS_KEY: KEY,
    LOG_LEVEL: 'debug',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  }),
});

/** Every stored message of every stream (run logs, tasks, requests, dead letters, KV and object buckets). */
async function everyStreamMessage(sys: CrashSystem): Promise<{ where: string; bytes: Buffer }[]> {
  const found: { where: string; bytes: Buffer }[] = [];
  for await (const info of sys.system.jsm.streams.list()) {
    const { first_seq: first, last_seq: last } = info.state;
    for (let seq = first; seq <= last && last > 0; seq += 1) {
      const msg = await sys.system.jsm.streams.getMessage(info.config.name, { seq }).catch(() => null);
      if (!msg) continue; // deleted (an erased request)
      const headers = msg.header
        ? [...msg.header.keys()].map((k) => `${k}:${msg.header.get(k)}`).join('\n')
        : '';
      found.push({
        where: `${info.config.name}#${seq} ${msg.subject}`,
        bytes: Buffer.concat([Buffer.from(msg.data), Buffer.from(headers)]),
      });
    }
  }
  return found;
}

/** Every row of every table of the test database, as text. */
async function everyRow(sys: CrashSystem): Promise<{ where: string; text: string }[]> {
  const tables = await sys.system.sql<{ schema: string; name: string }[]>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_schema not in ('pg_catalog', 'information_schema') and table_type = 'BASE TABLE'`;
  const rows: { where: string; text: string }[] = [];
  for (const table of tables) {
    const dumped = await sys.system.sql.unsafe<{ row: string }[]>(
      `select t::text as row from "${table.schema}"."${table.name}" t`,
    );
    for (const { row } of dumped) rows.push({ where: `${table.schema}.${table.name}`, text: row });
  }
  return rows;
}

function places(haystacks: { where: string; text: string }[], needle: string): string[] {
  return haystacks.filter((h) => h.text.includes(needle)).map((h) => h.where);
}

describe('a tool argument marked secret', () => {
  it('reaches the tool in clear and is nowhere in the streams, the database, the logs or the spans', async () => {
    const sys = crash();
    const runId = 'secret-card';
    await sys.submit({
      runId,
      input: { card: { token: INPUT_SECRET }, note: 'not secret' },
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'pay.secret', args: { amount: 100, card: { token: PLAN_SECRET } } },
          { tool: 'pay.secret', args: { amount: 200, card: '$input.card' } },
          { tool: 'pay.charge', args: { amount: 300 } },
        ],
      },
    });
    const watched = await watchToEnd(sys, runId, 30_000);
    expect(watched.at(-1)?.type, watched.map((e) => e.type).join(', ')).toBe('run_completed');

    // The tool got the clear values: the witness saw them as the Authorization header.
    const log: RunEvent[] = await logOf(sys, runId);
    const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
    expect(requested.map((c) => c.tool)).toEqual(['pay.secret', 'pay.secret', 'pay.charge']);
    expect(sys.witness.authorizations(requested[0]!.idempotencyKey)).toEqual([`Bearer ${PLAN_SECRET}`]);
    expect(sys.witness.authorizations(requested[1]!.idempotencyKey)).toEqual([`Bearer ${INPUT_SECRET}`]);
    // The log holds them sealed: the arguments, the input, and the results' receipts.
    for (const call of requested.slice(0, 2))
      expect(isSecretEnvelope((call.args['card'] as { token: unknown }).token)).toBe(true);
    const requestEvent = log.find((e) => e.type === 'run_requested');
    const input = (
      requestEvent?.data as unknown as { request: { input: { card: { token: unknown }; note: string } } }
    ).request.input;
    expect(isSecretEnvelope(input.card.token)).toBe(true);
    expect(input.note).toBe('not secret');
    const completed = log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data] : []));
    for (const done of completed.slice(0, 2)) {
      const result = done.result as { receipt: unknown; chargeId: string };
      expect(isSecretEnvelope(result.receipt)).toBe(true);
      expect(result.chargeId).toMatch(/^ch_/);
    }

    // Spans of both secret calls have been exported before anything is searched.
    await receiver.waitForSpans(
      (spans) => spans.filter((s) => s.name === 'dura.tool.call pay.secret').length >= 2,
      30_000,
    );
    const streams = (await everyStreamMessage(sys)).map((m) => ({
      where: m.where,
      text: m.bytes.toString('latin1'),
    }));
    const rows = await everyRow(sys);
    const logs = (['planner', 'tool-gateway', 'projector'] as const).map((name) => ({
      where: `${name} output`,
      text: sys.proc(name).output(),
    }));
    const spans = receiver
      .spans()
      .map((span) => ({ where: `span ${span.name}`, text: JSON.stringify(span) }));
    // The search is real: the haystacks are not empty, and they do hold what is not secret.
    expect(streams.length).toBeGreaterThan(10);
    expect(rows.length).toBeGreaterThan(10);
    expect(spans.length).toBeGreaterThan(5);
    expect(places(streams, 'not secret').length).toBeGreaterThan(0);
    expect(places(rows, 'not secret').length).toBeGreaterThan(0);
    expect(places(logs, 'tool gateway started')).toEqual(['tool-gateway output']);

    for (const secret of [PLAN_SECRET, INPUT_SECRET]) {
      expect(places(streams, secret), `streams holding ${secret}`).toEqual([]);
      expect(places(rows, secret), `rows holding ${secret}`).toEqual([]);
      expect(places(logs, secret), `logs holding ${secret}`).toEqual([]);
      expect(places(spans, secret), `spans holding ${secret}`).toEqual([]);
    }
  });
});
