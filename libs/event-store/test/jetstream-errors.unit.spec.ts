import { JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import {
  nanos,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { ContractViolation, DuraError, STREAMS } from '@dura/contracts';
import {
  ConcurrencyConflict,
  CorruptEvent,
  decodeStored,
  DEFAULT_STREAM_OPTIONS,
  isJetStreamNotReady,
  isJetStreamRefusal,
  JS_CODES,
  mapAppendError,
  streamConfigs,
  StreamUnavailable,
} from '../src/index';
import { runEvents } from './run-events';

const apiError = (err_code: number, description: string) =>
  new JetStreamApiError({ err_code, code: 400, description });
const bytes = (text: string) => new TextEncoder().encode(text);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('mapAppendError', () => {
  it('turns wrong-last-sequence into ConcurrencyConflict, keeping the server error as cause', () => {
    const cause = apiError(JS_CODES.wrongLastSequence, 'wrong last sequence: 7');
    const error = mapAppendError(cause, 'run-1', 5);
    expect(error).toBeInstanceOf(ConcurrencyConflict);
    expect(error).toMatchObject({
      code: 'concurrency_conflict',
      retryable: true,
      runId: 'run-1',
      expectedSeq: 5,
      cause,
    });
    expect(error.message).toMatch(/run-1.*seq 5.*re-fold/);
  });

  it.each([
    ['a timeout', new TimeoutError(), /did not acknowledge.*safe to retry/],
    ['no responders', new NoRespondersError('dura.run.x'), /no JetStream stream captures/],
    [
      'a request nobody answered',
      new RequestError('', { cause: new NoRespondersError('dura.run.x') }),
      /captures/,
    ],
    [
      'nats.js 3 reporting no responders',
      new Error('jetstream is not enabled', {
        cause: new RequestError('', { cause: new NoRespondersError('dura.run.x') }),
      }),
      /captures/,
    ],
    [
      "a server without the stream (a NATS that is not Dura's)",
      apiError(10059, 'stream not found'),
      /this NATS server has no Dura streams .* point NATS_URL \/ --nats at Dura's server/,
    ],
    [
      'any other server error',
      apiError(10077, 'maximum messages exceeded'),
      /run-1 failed: maximum messages exceeded/,
    ],
    ['a thrown string', 'socket hang up', /run-1 failed: socket hang up/],
  ])('turns %s into a retryable StreamUnavailable that says what happened', (_, cause, message) => {
    const error = mapAppendError(cause, 'run-1', 3);
    expect(error).toBeInstanceOf(StreamUnavailable);
    expect(error).toMatchObject({ code: 'stream_unavailable', retryable: true, cause });
    expect(error.message).toMatch(message);
  });

  it('passes a DuraError through unchanged', () => {
    const original = new DuraError('custom', 'already typed');
    expect(mapAppendError(original, 'run-1', 0)).toBe(original);
  });
});

describe('decodeStored', () => {
  const event = runEvents('run-1').started();

  it('decodes an event and stamps the stream sequence on it', () => {
    expect(decodeStored({ seq: 42, data: bytes(JSON.stringify(event)) })).toEqual({ ...event, seq: 42 });
  });

  it('names the seq of bytes that are not JSON', () => {
    const error = thrown(() => decodeStored({ seq: 9, data: bytes('{nope') }));
    expect(error).toBeInstanceOf(CorruptEvent);
    expect(error).toMatchObject({ code: 'corrupt_event', retryable: false, seq: 9 });
    expect((error as Error).message).toBe('event at seq 9: payload is not JSON');
    expect((error as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it('names the seq and the contract problem of JSON that is not an event', () => {
    const data = bytes(JSON.stringify({ ...event, type: 'run_exploded' }));
    const error = thrown(() => decodeStored({ seq: 11, data }));
    expect(error).toBeInstanceOf(CorruptEvent);
    expect(error).toMatchObject({
      seq: 11,
      message: expect.stringMatching(/seq 11.*unknown type "run_exploded"/),
    });
    expect((error as Error).cause).toBeInstanceOf(ContractViolation);
  });
});

describe('streamConfigs', () => {
  it('describes the five streams; only the task stream is a work queue, runs never expire, live text soon does', () => {
    const configs = streamConfigs(DEFAULT_STREAM_OPTIONS);
    expect(configs.map((c) => [c.name, c.retention])).toEqual([
      [STREAMS.requests, RetentionPolicy.Limits],
      [STREAMS.runs, RetentionPolicy.Limits],
      [STREAMS.tasks, RetentionPolicy.Workqueue],
      [STREAMS.deadLetters, RetentionPolicy.Limits],
      [STREAMS.tokens, RetentionPolicy.Limits],
    ]);
    expect(configs.find((c) => c.name === STREAMS.runs)).not.toHaveProperty('max_age');
    // Bounded in time and bytes, read by message get like the run log.
    expect(configs.find((c) => c.name === STREAMS.tokens)).toMatchObject({
      subjects: ['dura.tokens.*'],
      max_age: nanos(15 * 60 * 1000),
      max_bytes: 512 * 1024 * 1024,
      allow_direct: true,
      discard: 'old',
    });
    for (const config of configs) {
      expect(config).toMatchObject({
        num_replicas: 1,
        storage: StorageType.File,
        duplicate_window: nanos(120_000),
      });
    }
  });

  it('applies replicas, storage and the dedupe window to every stream', () => {
    const configs = streamConfigs({ replicas: 3, storage: 'memory', duplicateWindowMs: 5_000 });
    for (const config of configs) {
      expect(config).toMatchObject({
        num_replicas: 3,
        storage: StorageType.Memory,
        duplicate_window: nanos(5_000),
      });
    }
  });
});

describe('decodeStored on hostile bytes', () => {
  it('refuses an event nested past the run log limits without recursing, and bytes that are not UTF-8', () => {
    const deep = new TextEncoder().encode(
      `{"type":"run_requested","data":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
    );
    expect(() => decodeStored({ seq: 3, data: deep })).toThrow(/event at seq 3: breaks the run log's limits/);
    const notUtf8 = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    expect(() => decodeStored({ seq: 4, data: notUtf8 })).toThrow('event at seq 4: payload is not UTF-8');
  });
});

describe('isJetStreamNotReady', () => {
  const serverError = (err_code: number, description: string) =>
    new JetStreamApiError({ err_code, code: 503, description });

  it('is true for a cluster still forming: no placement peers, no meta leader, cluster not active', () => {
    expect(isJetStreamNotReady(serverError(10005, 'no suitable peers for placement'))).toBe(true);
    expect(isJetStreamNotReady(serverError(10008, 'JetStream system temporarily unavailable'))).toBe(true);
    expect(isJetStreamNotReady(serverError(10006, 'JetStream cluster not active'))).toBe(true);
  });

  it('is true for a management request that timed out, also when wrapped', () => {
    expect(isJetStreamNotReady(new TimeoutError())).toBe(true);
    expect(isJetStreamNotReady(new Error('stream info failed', { cause: new TimeoutError() }))).toBe(true);
  });

  it('is false for what an operator must fix: R3 on a single server, another API refusal, no JetStream at all', () => {
    expect(isJetStreamNotReady(serverError(10074, 'replicas > 1 not supported in non-clustered mode'))).toBe(
      false,
    );
    expect(isJetStreamNotReady(apiError(10058, 'stream name already in use'))).toBe(false);
    expect(isJetStreamNotReady(new NoRespondersError('$JS.API.INFO'))).toBe(false);
    expect(isJetStreamNotReady(new Error('permissions violation'))).toBe(false);
  });
});

describe('isJetStreamRefusal', () => {
  it('is true for an API error other than "not ready yet", and for a denied subject, also when wrapped', () => {
    expect(isJetStreamRefusal(apiError(10074, 'replicas > 1 not supported in non-clustered mode'))).toBe(
      true,
    );
    const denied = new PermissionViolationError(
      'Permissions Violation for Publish',
      'publish',
      '$JS.API.STREAM.CREATE.DURA_RUNS',
    );
    expect(isJetStreamRefusal(new RequestError('denied', { cause: denied }))).toBe(true);
  });

  it('is false for what waiting fixes: a cluster still forming, a timeout, a dropped connection', () => {
    expect(isJetStreamRefusal(apiError(10005, 'no suitable peers for placement'))).toBe(false);
    expect(isJetStreamRefusal(new TimeoutError())).toBe(false);
    expect(isJetStreamRefusal(new Error('connection closed'))).toBe(false);
  });
});
