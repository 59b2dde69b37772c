import { headers } from '@nats-io/nats-core';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import {
  messagingAttributes,
  traceparentOf,
  withConsumerSpan,
  withProducerSpan,
  withSpan,
} from '../src/index';
import { useInMemoryTracing } from './in-memory-tracing';

const tracing = useInMemoryTracing();
const span = (name: string) => tracing.finished().find((s) => s.name === name)!;

describe('withProducerSpan', () => {
  it('opens a PRODUCER span with the messaging attributes and hands out headers that carry it', async () => {
    const parent = tracing.tracer.startSpan('run');
    const existing = headers();
    existing.set('Nats-Msg-Id', 'run-1@3');

    const sent = await withProducerSpan(
      tracing.tracer,
      {
        destination: 'dura.run.r-1',
        destinationTemplate: 'dura.run.*',
        messageId: 'run-1@3',
        parent: trace.setSpan(ROOT_CONTEXT, parent),
        headers: existing,
      },
      (h, producer) => ({ headers: h, traceparent: traceparentOf(producer) }),
    );
    parent.end();

    const producer = span('publish dura.run.*');
    expect(producer.kind).toBe(SpanKind.PRODUCER);
    expect(producer.attributes).toEqual({
      'messaging.system': 'nats',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.destination.name': 'dura.run.r-1',
      'messaging.destination.template': 'dura.run.*',
      'messaging.message.id': 'run-1@3',
    });
    expect(producer.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(sent.headers).toBe(existing);
    expect(sent.headers.get('Nats-Msg-Id')).toBe('run-1@3');
    expect(sent.headers.get('traceparent')).toBe(sent.traceparent);
    expect(sent.traceparent).toContain(producer.spanContext().spanId);
  });
});

describe('withConsumerSpan', () => {
  it('continues the producer trace: a CONSUMER span whose parent is the span in the headers', async () => {
    const carrier = await withProducerSpan(tracing.tracer, { destination: 'dura.task.decide' }, (h) => h);

    const inside = await withConsumerSpan(
      tracing.tracer,
      { destination: 'dura.task.decide', messageId: 'r-1@9', consumerGroup: 'planner', headers: carrier },
      (consumer, ctx) => ({ consumer: consumer.spanContext(), active: trace.getSpanContext(ctx) }),
    );

    const producer = span('publish dura.task.decide');
    const consumer = span('process dura.task.decide');
    expect(consumer.kind).toBe(SpanKind.CONSUMER);
    expect(consumer.spanContext().traceId).toBe(producer.spanContext().traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(inside.active).toEqual(inside.consumer);
    expect(consumer.attributes).toEqual({
      'messaging.system': 'nats',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': 'dura.task.decide',
      'messaging.message.id': 'r-1@9',
      'messaging.consumer.group.name': 'planner',
    });
  });

  it('falls back to a recorded parent when the message carries no trace context', async () => {
    const recorded = tracing.tracer.startSpan('run as recorded');
    recorded.end();

    await withConsumerSpan(
      tracing.tracer,
      {
        destination: 'dura.run.r-2',
        headers: headers(),
        fallbackParent: trace.setSpan(ROOT_CONTEXT, recorded),
        operationType: 'receive',
        operationName: 'fetch',
      },
      () => undefined,
    );

    const consumer = span('fetch dura.run.r-2');
    expect(consumer.parentSpanContext?.spanId).toBe(recorded.spanContext().spanId);
    expect(consumer.attributes['messaging.operation.type']).toBe('receive');
  });

  it('continues the trace it is told to, linking a sender from another trace', async () => {
    const run = tracing.tracer.startSpan('run wait');
    run.end();
    const client = await withProducerSpan(
      tracing.tracer,
      { destination: 'dura.signal', parent: ROOT_CONTEXT },
      (h) => h,
    );
    const sender = span('publish dura.signal').spanContext();
    const continues = trace.setSpan(ROOT_CONTEXT, run);

    await withConsumerSpan(
      tracing.tracer,
      { destination: 'dura.signal', headers: client, continues },
      () => undefined,
    );
    await withConsumerSpan(
      tracing.tracer,
      { destination: 'dura.timer', headers: headers(), continues },
      () => undefined,
    );

    const signal = span('process dura.signal');
    expect(signal.spanContext().traceId).toBe(run.spanContext().traceId);
    expect(signal.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(signal.links.map((link) => link.context.spanId)).toEqual([sender.spanId]);
    const untraced = span('process dura.timer');
    expect(untraced.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(untraced.links).toEqual([]);
  });

  it('keeps the sender as parent when it is in the trace it continues', async () => {
    const run = tracing.tracer.startSpan('run root');
    const carrier = await withProducerSpan(
      tracing.tracer,
      { destination: 'dura.task.timer', parent: trace.setSpan(ROOT_CONTEXT, run) },
      (h) => h,
    );
    run.end();

    await withConsumerSpan(
      tracing.tracer,
      { destination: 'dura.task.timer', headers: carrier, continues: trace.setSpan(ROOT_CONTEXT, run) },
      () => undefined,
    );

    const consumer = span('process dura.task.timer');
    expect(consumer.parentSpanContext?.spanId).toBe(span('publish dura.task.timer').spanContext().spanId);
    expect(consumer.links).toEqual([]);
  });

  it('records a failure on the span (status, exception event, error.type) and rethrows the same error', async () => {
    const failure = new DuraError('tool_unavailable', 'the tool did not answer', { retryable: true });

    const thrown = await withConsumerSpan(tracing.tracer, { destination: 'dura.task.tool.charge' }, () => {
      throw failure;
    }).catch((e: unknown) => e);

    expect(thrown).toBe(failure);
    const consumer = span('process dura.task.tool.charge');
    expect(consumer.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the tool did not answer' });
    expect(consumer.attributes['error.type']).toBe('tool_unavailable');
    expect(consumer.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([
      ['exception', 'the tool did not answer'],
    ]);
    expect(consumer.ended).toBe(true);
  });
});

describe('withSpan', () => {
  it('uses the class name as error.type for errors without a code, and ends the span on success', async () => {
    await expect(
      withSpan(tracing.tracer, 'fails', {}, async () => {
        await Promise.resolve();
        throw new RangeError('out of range');
      }),
    ).rejects.toThrow('out of range');
    await expect(withSpan(tracing.tracer, 'works', {}, () => 42)).resolves.toBe(42);

    expect(span('fails').attributes['error.type']).toBe('RangeError');
    expect(span('works').status.code).toBe(SpanStatusCode.UNSET);
    expect(span('works').ended).toBe(true);
  });
});

describe('messagingAttributes', () => {
  it('leaves out the attributes whose inputs are absent', () => {
    expect(
      messagingAttributes({ operationType: 'send', operationName: 'publish', destination: 'dura.submit' }),
    ).toEqual({
      'messaging.system': 'nats',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.destination.name': 'dura.submit',
    });
  });
});
