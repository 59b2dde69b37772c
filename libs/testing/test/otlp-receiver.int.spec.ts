import { gzipSync } from 'node:zlib';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../src/index';

/** Spans made by the real SDK: a root with every attribute type, an event and an error, and a linked child. */
async function sampleSpans(rootName = 'root op'): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'probe-service' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('probe-scope');
  const root = tracer.startSpan(rootName, {
    kind: SpanKind.PRODUCER,
    attributes: { text: 'hello', flag: true, count: 42, negative: -7, ratio: 0.25, tags: ['a', 'b'] },
  });
  root.addEvent('something happened', { 'event.detail': 'x', 'event.n': 3 });
  root.setStatus({ code: SpanStatusCode.ERROR, message: 'it broke' });
  const child = tracer.startSpan(
    'child op',
    { kind: SpanKind.CONSUMER, links: [{ context: root.spanContext(), attributes: { why: 'because' } }] },
    trace.setSpan(context.active(), root),
  );
  child.end();
  root.end();
  // Read before shutdown: shutting the in-memory exporter down empties it.
  const finished = exporter.getFinishedSpans();
  await provider.shutdown();
  return finished;
}

function post(
  receiver: OtlpReceiver,
  path: string,
  body: Uint8Array | string,
  headers: Record<string, string>,
) {
  return fetch(`${receiver.url}${path}`, { method: 'POST', body, headers });
}

let receiver: OtlpReceiver;
let spans: ReadableSpan[];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  spans = await sampleSpans();
});
afterAll(async () => {
  await receiver?.close();
});

function expectedSpans(): Partial<ReceivedSpan>[] {
  const [child, root] = [spans.find((s) => s.name === 'child op')!, spans.find((s) => s.name === 'root op')!];
  return [
    {
      traceId: root.spanContext().traceId,
      spanId: child.spanContext().spanId,
      parentSpanId: root.spanContext().spanId,
      name: 'child op',
      kind: 'consumer',
      service: 'probe-service',
      scope: 'probe-scope',
      attributes: {},
      events: [],
      links: [
        {
          traceId: root.spanContext().traceId,
          spanId: root.spanContext().spanId,
          attributes: { why: 'because' },
        },
      ],
      status: { code: 'unset' },
    },
    {
      traceId: root.spanContext().traceId,
      spanId: root.spanContext().spanId,
      parentSpanId: undefined,
      name: 'root op',
      kind: 'producer',
      service: 'probe-service',
      attributes: { text: 'hello', flag: true, count: 42, negative: -7, ratio: 0.25, tags: ['a', 'b'] },
      events: [{ name: 'something happened', attributes: { 'event.detail': 'x', 'event.n': 3 } }],
      status: { code: 'error', message: 'it broke' },
    },
  ];
}

describe('OTLP receiver', () => {
  it('decodes an http/protobuf trace export into plain spans with hex ids, links and typed attributes', async () => {
    const before = receiver.spans().length;
    const response = await post(receiver, '/v1/traces', ProtobufTraceSerializer.serializeRequest(spans)!, {
      'content-type': 'application/x-protobuf',
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-protobuf');
    const received = receiver.spans().slice(before);
    expect(received).toMatchObject(expectedSpans());
    expect(received[0]!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(received[0]!.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(BigInt(received[1]!.endTimeUnixNano)).toBeGreaterThanOrEqual(
      BigInt(received[1]!.startTimeUnixNano),
    );
  });

  it('decodes the same spans from http/json, gzipped or not, to identical objects', async () => {
    const before = receiver.spans().length;
    const json = JsonTraceSerializer.serializeRequest(spans)!;
    const plain = await post(receiver, '/v1/traces', json, { 'content-type': 'application/json' });
    const gzipped = await post(receiver, '/v1/traces', gzipSync(json), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    const proto = await post(receiver, '/v1/traces', ProtobufTraceSerializer.serializeRequest(spans)!, {
      'content-type': 'application/x-protobuf',
    });

    expect([plain.status, gzipped.status, proto.status]).toEqual([200, 200, 200]);
    expect(await plain.json()).toEqual({});
    const received = receiver.spans().slice(before);
    expect(received).toHaveLength(6);
    expect(received.slice(0, 2)).toMatchObject(expectedSpans());
    expect(received.slice(2, 4)).toEqual(received.slice(0, 2));
    expect(received.slice(4, 6)).toEqual(received.slice(0, 2));
  });

  it('waitForSpans resolves once the condition holds, and times out naming what did arrive', async () => {
    const waiting = receiver.waitForSpans((all) => all.some((s) => s.name === 'late op'), 5_000);
    await post(
      receiver,
      '/v1/traces',
      ProtobufTraceSerializer.serializeRequest(await sampleSpans('late op'))!,
      {
        'content-type': 'application/x-protobuf',
      },
    );
    const all = await waiting;
    const late = all.find((s) => s.name === 'late op')!;
    expect(
      all
        .filter((s) => s.traceId === late.traceId)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['child op', 'late op']);

    await expect(receiver.waitForSpans((all) => all.some((s) => s.name === 'never'), 100)).rejects.toThrow(
      /condition not met within 100 ms; received \d+ span\(s\): probe-service\/child op/,
    );
  });

  it('acknowledges metrics and logs exports and counts them', async () => {
    const before = receiver.stats();
    const metrics = await post(receiver, '/v1/metrics', '{"resourceMetrics":[]}', {
      'content-type': 'application/json',
    });
    const logs = await post(receiver, '/v1/logs', new Uint8Array(), {
      'content-type': 'application/x-protobuf',
    });

    expect([metrics.status, logs.status]).toEqual([200, 200]);
    expect(receiver.stats()).toMatchObject({
      metrics: before.metrics + 1,
      logs: before.logs + 1,
      json: before.json + 1,
      protobuf: before.protobuf + 1,
    });
  });

  it('refuses malformed bodies and unknown routes with 400, records why, and keeps serving', async () => {
    const before = receiver.spans().length;
    const truncated = ProtobufTraceSerializer.serializeRequest(spans)!.subarray(0, 40);
    const responses = await Promise.all([
      post(receiver, '/v1/traces', truncated, { 'content-type': 'application/x-protobuf' }),
      post(receiver, '/v1/traces', '{not json', { 'content-type': 'application/json' }),
      post(receiver, '/v1/traces', '{}', { 'content-type': 'text/plain' }),
      post(receiver, '/v2/nothing', '{}', { 'content-type': 'application/json' }),
    ]);

    expect(responses.map((r) => r.status)).toEqual([400, 400, 400, 400]);
    expect(receiver.spans()).toHaveLength(before);
    expect(receiver.stats().rejected).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^malformed protobuf trace export: .*truncated/),
        expect.stringMatching(/^malformed JSON trace export/),
        'unsupported content-type "text/plain"',
        'no route for POST /v2/nothing',
      ]),
    );
    const again = await post(receiver, '/v1/traces', ProtobufTraceSerializer.serializeRequest(spans)!, {
      'content-type': 'application/x-protobuf',
    });
    expect(again.status).toBe(200);
  });
});
