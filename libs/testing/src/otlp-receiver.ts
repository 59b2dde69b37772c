import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, inflateSync } from 'node:zlib';
import { spansFromOtlpProtobuf } from './otlp-protobuf';
import { spansFromOtlpJson, type ReceivedSpan } from './otlp-span';

/**
 * A local stand-in for an OpenTelemetry collector, so tracing tests see exactly what a process exported:
 * point OTEL_EXPORTER_OTLP_ENDPOINT at `url`, then read `spans()`.
 */
export interface OtlpReceiver extends AsyncDisposable {
  /** http://127.0.0.1:<port>, the value for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  readonly url: string;
  /** Every span received so far, in arrival order. */
  spans(): ReceivedSpan[];
  /** Resolves with all spans once `predicate` holds for them; rejects after `timeoutMs`, naming what arrived. */
  waitForSpans(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Accepted export requests per signal and per encoding, and bodies refused as malformed (with the reason). */
  stats(): OtlpReceiverStats;
  close(): Promise<void>;
}

export interface OtlpReceiverStats {
  traces: number;
  metrics: number;
  logs: number;
  protobuf: number;
  json: number;
  rejected: string[];
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const SIGNALS = { '/v1/traces': 'traces', '/v1/metrics': 'metrics', '/v1/logs': 'logs' } as const;

class BadRequest extends Error {}

/**
 * Starts an OTLP/HTTP receiver on a free port of 127.0.0.1. `POST /v1/traces` takes `application/x-protobuf`
 * (http/protobuf) or `application/json` (http/json), gzip or not, and keeps the spans; `/v1/metrics` and
 * `/v1/logs` are acknowledged and counted. A malformed body gets 400 and is listed in `stats().rejected`.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const counts = { traces: 0, metrics: 0, logs: 0, protobuf: 0, json: 0 };
  const rejected: string[] = [];

  async function handle(req: IncomingMessage): Promise<{ protobuf: boolean }> {
    const path = new URL(req.url ?? '/', 'http://receiver').pathname;
    const signal = SIGNALS[path as keyof typeof SIGNALS];
    if (req.method !== 'POST' || !signal) throw new BadRequest(`no route for ${req.method} ${path}`);
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const protobuf = contentType === 'application/x-protobuf' || contentType === 'application/protobuf';
    if (!protobuf && contentType !== 'application/json')
      throw new BadRequest(`unsupported content-type "${contentType}"`);
    const body = decompress(await readBody(req), req.headers['content-encoding']);
    if (signal === 'traces') {
      try {
        received.push(
          ...(protobuf
            ? spansFromOtlpProtobuf(body)
            : spansFromOtlpJson(JSON.parse(Buffer.from(body).toString('utf8')))),
        );
      } catch (err) {
        throw new BadRequest(`malformed ${protobuf ? 'protobuf' : 'JSON'} trace export: ${String(err)}`);
      }
    }
    counts[signal] += 1;
    counts[protobuf ? 'protobuf' : 'json'] += 1;
    return { protobuf };
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    handle(req).then(
      // An empty Export*ServiceResponse: zero bytes in protobuf, `{}` in JSON.
      ({ protobuf }) =>
        protobuf
          ? res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
          : res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof BadRequest) rejected.push(message);
        if (!res.destroyed)
          res.writeHead(err instanceof BadRequest ? 400 : 500, { 'content-type': 'text/plain' }).end(message);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));

  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    waitForSpans: async (predicate, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate([...received])) {
        if (Date.now() > deadline)
          throw new Error(
            `OTLP receiver: condition not met within ${timeoutMs} ms; received ${received.length} span(s): ` +
              `${received.map((s) => `${s.service ?? '?'}/${s.name}`).join(', ') || 'none'}` +
              (rejected.length > 0 ? `; rejected: ${rejected.join(' | ')}` : ''),
          );
        await sleep(25);
      }
      return [...received];
    },
    stats: () => ({ ...counts, rejected: [...rejected] }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function decompress(body: Uint8Array, encoding: string | undefined): Uint8Array {
  try {
    if (encoding === 'gzip') return gunzipSync(body);
    if (encoding === 'deflate') return inflateSync(body);
  } catch (err) {
    throw new BadRequest(`cannot ${encoding}-decode the body: ${String(err)}`);
  }
  if (encoding && encoding !== 'identity') throw new BadRequest(`unsupported content-encoding "${encoding}"`);
  return body;
}
