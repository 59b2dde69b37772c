import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A charge as the witness stores it and answers it, first time and on every repeat. */
export interface WitnessCharge {
  chargeId: string;
  amount: number;
}

/**
 * An external payments API that sees everything: how often each idempotency key was asked for
 * (`requests`) and how often it really charged (`effects`). Fault tests read it to prove "one effect per key"
 * from outside the system, where no bug in Dura's own bookkeeping can hide a double charge.
 */
export interface PaymentWitness extends AsyncDisposable {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** POST /charges requests that carried `key`, including repeats and refused ones. */
  requests(key: string): number;
  /** Charges performed for `key`: 0 or 1, unless something is badly wrong. */
  effects(key: string): number;
  /** GET /charges/:key status look-ups for `key`. */
  lookups(key: string): number;
  /**
   * The attempt each POST for `key` said it was (header `X-Attempt`), in order of arrival; `undefined` where
   * a request named none. How a checker tells a re-run from a paused caller's request arriving late.
   */
  attempts(key: string): (number | undefined)[];
  /** The `Authorization` headers POSTs for `key` carried (how a test sees what credential a tool really sent). */
  authorizations(key: string): string[];
  /** POST /charges requests being answered right now (arrival to answer, `?delayMs` included). */
  inFlight(): number;
  /** The most POST /charges requests ever in flight at once: what a concurrency limit must bound. */
  maxConcurrent(): number;
  /** Every idempotency key a POST carried, in order of first arrival. */
  keys(): string[];
  totals(): { requests: number; effects: number; lookups: number; keys: number };
  /**
   * Holds back every POST /charges answer (the effect itself still happens on arrival) until the returned
   * function is called: a test that must act while calls are still queued holds them, instead of racing the
   * clock. Answers already held are released together; `close()` releases them too.
   */
  holdAnswers(): () => void;
  /**
   * A provider having a bad moment, until the returned function heals it: `failNext` POSTs answer `status`
   * (default 503) without charging (a burst of 5xx); with `lateMs`, every first answer is held back that
   * long after the charge (longer than the caller's timeout: it gave up, and the effect happened anyway).
   */
  misbehave(faults: { failNext?: number; status?: number; lateMs?: number }): () => void;
  /** POSTs answered with an injected failure, for `key` (counted in `requests` too). */
  refused(key: string): number;
  close(): Promise<void>;
}

interface KeyRecord {
  requests: number;
  attempts: (number | undefined)[];
  refused: number;
  lookups: number;
  authorizations: string[];
  charge?: WitnessCharge;
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 64 * 1024;
const MAX_DELAY_MS = 60_000;

/**
 * Starts the witness on a free port of 127.0.0.1.
 *
 * `POST /charges` (header `Idempotency-Key`, body `{"amount": number}`): the first request for a key
 * charges at once and stores `{chargeId, amount}`; a repeat answers the stored charge without charging; a
 * repeat with a different amount is refused with 422, as real payment APIs do. `?delayMs=N` holds the
 * answer back N ms after the charge, so a test can kill the caller mid-call with the effect already done.
 * `GET /charges/:key` answers the stored charge, or 404 when the key never charged.
 */
export async function startPaymentWitness(): Promise<PaymentWitness> {
  const records = new Map<string, KeyRecord>();
  const timers = new Set<NodeJS.Timeout>();
  let charges = 0;
  let inFlight = 0;
  let maxConcurrent = 0;
  let held: { promise: Promise<void>; release: () => void } | undefined;
  let faults: { failNext: number; status: number; lateMs: number } | undefined;

  const recordFor = (key: string): KeyRecord => {
    let record = records.get(key);
    if (!record) {
      record = { requests: 0, attempts: [], refused: 0, lookups: 0, authorizations: [] };
      records.set(key, record);
    }
    return record;
  };

  async function charge(req: IncomingMessage, url: URL): Promise<{ status: number; body: unknown }> {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key.length === 0)
      throw new HttpProblem(400, 'the Idempotency-Key header is required');
    const record = recordFor(key);
    record.requests += 1;
    record.attempts.push(attemptOf(req.headers['x-attempt']));
    const authorization = req.headers.authorization;
    if (authorization !== undefined) record.authorizations.push(authorization);
    const amount = parseAmount(await readBody(req));
    if (faults && faults.failNext > 0) {
      faults.failNext -= 1;
      record.refused += 1;
      throw new HttpProblem(faults.status, `injected failure ${faults.status} (nothing charged)`);
    }
    const delayMs = Math.max(parseDelay(url.searchParams.get('delayMs')), faults?.lateMs ?? 0);
    if (record.charge && record.charge.amount !== amount)
      throw new HttpProblem(
        422,
        `key ${key} was first used for amount ${record.charge.amount}, not ${amount}`,
      );
    const repeat = record.charge !== undefined;
    // The effect happens when the request arrives; only the answer is slow. A caller killed mid-call has charged.
    record.charge ??= { chargeId: `ch_${String((charges += 1)).padStart(6, '0')}`, amount };
    const stored = record.charge;
    if (delayMs > 0 && !repeat) await sleep(delayMs, timers);
    if (held) await held.promise;
    return { status: repeat ? 200 : 201, body: stored };
  }

  function lookup(key: string): { status: number; body: unknown } {
    const record = recordFor(key);
    record.lookups += 1;
    if (!record.charge) return { status: 404, body: { error: `no charge for key ${key}` } };
    return { status: 200, body: record.charge };
  }

  async function route(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = new URL(req.url ?? '/', 'http://witness');
    if (req.method === 'POST' && url.pathname === '/charges') {
      inFlight += 1;
      maxConcurrent = Math.max(maxConcurrent, inFlight);
      try {
        return await charge(req, url);
      } finally {
        inFlight -= 1;
      }
    }
    const match = /^\/charges\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && match?.[1]) return lookup(decodeURIComponent(match[1]));
    throw new HttpProblem(404, `no route for ${req.method} ${url.pathname}`);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    route(req).then(
      ({ status, body }) => reply(res, status, body),
      (err: unknown) =>
        err instanceof HttpProblem
          ? reply(res, err.status, { error: err.message })
          : reply(res, 500, { error: String(err) }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      held?.release();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    requests: (key) => records.get(key)?.requests ?? 0,
    effects: (key) => (records.get(key)?.charge ? 1 : 0),
    lookups: (key) => records.get(key)?.lookups ?? 0,
    attempts: (key) => [...(records.get(key)?.attempts ?? [])],
    authorizations: (key) => [...(records.get(key)?.authorizations ?? [])],
    inFlight: () => inFlight,
    maxConcurrent: () => maxConcurrent,
    keys: () => [...records.entries()].filter(([, r]) => r.requests > 0).map(([key]) => key),
    totals: () => {
      const all = [...records.values()];
      const sum = (pick: (r: KeyRecord) => number) => all.reduce((total, r) => total + pick(r), 0);
      return {
        requests: sum((r) => r.requests),
        effects: charges,
        lookups: sum((r) => r.lookups),
        keys: all.filter((r) => r.requests > 0).length,
      };
    },
    holdAnswers: () => {
      if (!held) {
        let release = (): void => undefined;
        const promise = new Promise<void>((resolve) => (release = resolve));
        const hold = {
          promise,
          release: () => {
            if (held === hold) held = undefined;
            release();
          },
        };
        held = hold;
      }
      return held.release;
    },
    misbehave: (wanted) => {
      const current = {
        failNext: wanted.failNext ?? 0,
        status: wanted.status ?? 503,
        lateMs: wanted.lateMs ?? 0,
      };
      faults = current;
      return () => {
        if (faults === current) faults = undefined;
      };
    },
    refused: (key) => records.get(key)?.refused ?? 0,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Requests whose attempt is below one that arrived before them: a late request of an attempt another replica
 * had already taken over. A re-run sends a higher attempt after the earlier one arrived, so it is not late.
 */
export function lateArrivals(attempts: readonly (number | undefined)[]): number {
  let highest = 0;
  let late = 0;
  for (const attempt of attempts) {
    if (attempt === undefined) continue;
    if (attempt < highest) late += 1;
    highest = Math.max(highest, attempt);
  }
  return late;
}

/** A request's `X-Attempt`: a positive whole number, or undefined when absent or not one. */
function attemptOf(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : undefined;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  // The caller may have died mid-call (that is the point of ?delayMs); writing to its socket is then a no-op.
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpProblem(413, 'request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseAmount(text: string): number {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpProblem(400, 'the body must be JSON');
  }
  const amount = (body as { amount?: unknown } | null)?.amount;
  if (typeof amount !== 'number' || !Number.isFinite(amount))
    throw new HttpProblem(400, 'the body must be {"amount": number}');
  return amount;
}

function parseDelay(raw: string | null): number {
  if (raw === null) return 0;
  const delay = Number(raw);
  if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_MS)
    throw new HttpProblem(400, `delayMs must be an integer from 0 to ${MAX_DELAY_MS}, got "${raw}"`);
  return delay;
}

function sleep(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}
