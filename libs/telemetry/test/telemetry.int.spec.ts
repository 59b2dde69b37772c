import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, useTestInfra, type OtlpReceiver, type ReceivedSpan } from '@dura/testing';
import {
  DURA_ATTRS,
  DURA_METRICS,
  PROMETHEUS_CONTENT_TYPE,
  startTelemetry,
  traceparentOf,
  withConsumerSpan,
  withProducerSpan,
  withSpan,
  type Telemetry,
} from '../src/index';

const infra = useTestInfra({ database: false });
let receiver: OtlpReceiver;
let nc: NatsConnection;
let js: JetStreamClient;
let telemetry: Telemetry | undefined;

const STREAM = 'PROBE';

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  nc = await connect({ servers: infra().nats.url });
  js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: STREAM, subjects: ['probe.>'] });
});
afterEach(async () => {
  // Teardown must not depend on the test passing: a leaked SDK would refuse the next start.
  await telemetry?.shutdown();
  telemetry = undefined;
});
afterAll(async () => {
  await nc?.close();
  await receiver?.close();
});

/**
 * A run span publishes one message through JetStream inside a producer span; a durable consumer receives it
 * and handles it inside a consumer span with one nested span, as the services will.
 */
async function publishAndConsume(
  t: Telemetry,
  name: string,
): Promise<{ traceId: string; seenTraceparent: string }> {
  const subject = `probe.${name}`;
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(STREAM, {
    durable_name: name,
    filter_subject: subject,
    ack_policy: AckPolicy.Explicit,
  });

  const traceId = await withSpan(t.tracer, 'run', { attributes: { [DURA_ATTRS.runId]: name } }, (run) =>
    withProducerSpan(
      t.tracer,
      { destination: subject, destinationTemplate: 'probe.*', messageId: `${name}@1` },
      async (headers) => {
        await js.publish(subject, 'payload', { msgID: `${name}@1`, headers });
        return run.spanContext().traceId;
      },
    ),
  );

  const msg = await (await js.consumers.get(STREAM, name)).next({ expires: 5_000 });
  if (!msg) throw new Error(`no message on ${subject}`);
  await withConsumerSpan(
    t.tracer,
    {
      destination: msg.subject,
      destinationTemplate: 'probe.*',
      messageId: msg.headers?.get('Nats-Msg-Id'),
      consumerGroup: name,
      headers: msg.headers,
    },
    () => withSpan(t.tracer, 'handle', {}, () => msg.ack()),
  );
  return { traceId, seenTraceparent: msg.headers?.get('traceparent') ?? '' };
}

const byName = (spans: ReceivedSpan[], name: string) => spans.find((s) => s.name === name)!;

describe.each(['http/protobuf', 'http/json'] as const)('export over %s', (protocol) => {
  it('delivers run, producer, consumer and nested spans as one trace with the causal parent links', async () => {
    const consumer = `probe_${protocol.replace('/', '_')}`;
    const before = receiver.stats();
    telemetry = await startTelemetry({
      service: 'probe-service',
      version: '9.9.9',
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=int-test',
      },
    });
    expect(telemetry.enabled).toBe(true);

    const { traceId, seenTraceparent } = await publishAndConsume(telemetry, consumer);
    await telemetry.shutdown(); // flushes the batch processor

    const spans = (
      await receiver.waitForSpans((all) => all.filter((s) => s.traceId === traceId).length >= 4)
    ).filter((s) => s.traceId === traceId);
    const encoding = protocol === 'http/json' ? 'json' : 'protobuf';
    expect(receiver.stats()[encoding]).toBeGreaterThan(before[encoding]);
    expect(receiver.stats().rejected).toEqual([]);
    expect(spans.map((s) => s.name).sort()).toEqual(['handle', 'process probe.*', 'publish probe.*', 'run']);
    const [run, publish, process, handle] = ['run', 'publish probe.*', 'process probe.*', 'handle'].map((n) =>
      byName(spans, n),
    ) as [ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan];
    expect(run.parentSpanId).toBeUndefined();
    expect(publish.parentSpanId).toBe(run.spanId);
    expect(process.parentSpanId).toBe(publish.spanId);
    expect(handle.parentSpanId).toBe(process.spanId);
    expect(seenTraceparent).toBe(`00-${traceId}-${publish.spanId}-01`);
    expect(spans.every((s) => s.service === 'probe-service')).toBe(true);
    expect(run.attributes).toEqual({ 'dura.run.id': consumer });
    expect(publish).toMatchObject({
      kind: 'producer',
      status: { code: 'unset' },
      attributes: {
        'messaging.system': 'nats',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'publish',
        'messaging.destination.name': `probe.${consumer}`,
        'messaging.destination.template': 'probe.*',
        'messaging.message.id': `${consumer}@1`,
      },
    });
    expect(process).toMatchObject({
      kind: 'consumer',
      attributes: {
        'messaging.system': 'nats',
        'messaging.operation.type': 'process',
        'messaging.destination.name': `probe.${consumer}`,
        'messaging.message.id': `${consumer}@1`,
        'messaging.consumer.group.name': consumer,
      },
    });
  });
});

describe('with export off (no OTEL_* endpoint)', () => {
  it('records no spans, sends nothing, and still serves metrics', async () => {
    const before = receiver.stats().traces;
    telemetry = await startTelemetry({ service: 'quiet-service', env: {} });
    expect(telemetry.enabled).toBe(false);

    const traceparent = await withSpan(telemetry.tracer, 'unexported', {}, (span) => traceparentOf(span));
    telemetry.metrics.counter(DURA_METRICS.retries).add(2, { operation: 'append' });
    const server = createServer((req, res) => telemetry!.metrics.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
      expect(response.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
      expect(await response.text()).toContain(
        'dura_retries_total{operation="append",otel_scope_name="dura"} 2',
      );
    } finally {
      server.close();
    }
    await telemetry.shutdown();

    expect(traceparent).toBeUndefined();
    expect(receiver.stats().traces).toBe(before);
    expect(receiver.spans().some((s) => s.service === 'quiet-service')).toBe(false);
  });

  it('creates no spans at all with OTEL_SDK_DISABLED=true, and refuses a second start while one runs', async () => {
    telemetry = await startTelemetry({ service: 'off', env: { OTEL_SDK_DISABLED: 'true' } });

    expect(telemetry.enabled).toBe(false);
    const span = telemetry.tracer.startSpan('nothing');
    expect(span.isRecording()).toBe(false);
    expect(traceparentOf(span)).toBeUndefined();
    await expect(startTelemetry({ service: 'second', env: {} })).rejects.toMatchObject({
      code: 'telemetry_config_error',
    });
    await telemetry.shutdown();
    await telemetry.shutdown(); // safe twice

    telemetry = await startTelemetry({
      service: 'after-restart',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    expect(traceparentOf(telemetry.tracer.startSpan('ids again'))).toMatch(/^00-/);
  });
});
