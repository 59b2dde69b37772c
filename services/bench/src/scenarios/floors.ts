// G: the floors a step is built from, measured on this machine: one JetStream publish acknowledged (file
// storage, with a msg-id and an expected-last-subject-sequence, as an append is), one direct get, one read
// through a short-lived consumer, one Postgres commit of one row (synchronous_commit as the server runs),
// and one transaction of two statements. A step's latency and CPU are these, times how many it needs.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import postgres from 'postgres';
import { STREAMS } from '@dura/contracts';
import { DEFAULT_STREAM_OPTIONS, ensureStreams, readRaw } from '@dura/event-store';
import { createTestDatabase, startNatsServer } from '@dura/testing';
import type { BenchScenarios } from '../schema';
import { distribution } from '../stats';

async function timed(samples: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const began = performance.now();
    await fn(i);
    out.push(performance.now() - began);
  }
  return out;
}

export async function roundTripFloors(sizes: {
  floorSamples: number;
}): Promise<NonNullable<BenchScenarios['floors']>> {
  const samples = sizes.floorSamples;
  await using nats = await startNatsServer();
  const nc = await connect({ servers: nats.url, name: 'dura-bench-floors', noAsyncTraces: true });
  const db = await createTestDatabase({ prefix: 'bench_floors' });
  const sql = postgres(db.url, { max: 1, onnotice: () => undefined });
  try {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, DEFAULT_STREAM_OPTIONS);
    const subject = 'dura.run.floor';
    const payload = new TextEncoder().encode(JSON.stringify({ filler: 'x'.repeat(400) }));
    let last = 0;
    const publish = await timed(samples, async (i) => {
      const ack = await js.publish(subject, payload, {
        msgID: `floor-${i}`,
        expect: { lastSubjectSequence: last },
      });
      last = ack.seq;
    });
    const directGet = await timed(samples, (i) =>
      jsm.streams.getMessage(STREAMS.runs, { next_by_subj: subject, seq: 1 + (i % last) } as never),
    );
    const consumerRead = await timed(Math.min(samples, 200), () => readRaw(js, jsm, subject, last));
    const request = await (async () => {
      const sub = nc.subscribe('bench.floor.echo', {
        callback: (_err, msg) => {
          msg.respond(msg.data);
        },
      });
      try {
        return await timed(samples, () => nc.request('bench.floor.echo', payload));
      } finally {
        sub.unsubscribe();
      }
    })();
    await sql`create table floor (id bigserial primary key, payload jsonb not null)`;
    const row = JSON.stringify({ filler: 'x'.repeat(400) });
    const commit = await timed(samples, () => sql`insert into floor (payload) values (${row}::jsonb)`);
    const transaction = await timed(samples, () =>
      sql.begin(async (tx) => {
        await tx`update floor set payload = ${row}::jsonb where id = 1`;
        await tx`insert into floor (payload) values (${row}::jsonb)`;
      }),
    );
    const query = await timed(samples, () => sql`select 1`);
    return {
      mode: 'in-process',
      jetstreamPublishMs: distribution(publish),
      jetstreamDirectGetMs: distribution(directGet),
      jetstreamConsumerReadMs: distribution(consumerRead),
      natsRequestMs: distribution(request),
      postgresCommitMs: distribution(commit),
      postgresTwoStatementTransactionMs: distribution(transaction),
      postgresQueryMs: distribution(query),
    };
  } finally {
    await sql.end({ timeout: 2 });
    await db.drop();
    await nc.close();
  }
}
