import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { ToolError } from '../tool';
import { assertEgressAllowed, deniedScheme, type EgressPolicy } from './egress-policy';
import { formatIp, parseIp, type IpAddress } from './ip-address';

/** Every address a host name resolves to, as text. Injected in tests (a name that resolves to 127.0.0.1). */
export type Resolver = (host: string) => Promise<readonly string[]>;

export const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((found) => found.address);

export interface EgressRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface EgressResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Headers the caller may not set: the connection's own framing, and the Host that must match the checked URL.
const RESERVED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'upgrade']);
// Credentials meant for one origin never follow a redirect to another (what fetch does).
const ORIGIN_CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * One HTTP exchange under the egress policy: every hop's host is resolved, every resolved address checked,
 * and the socket connects only to the checked addresses (no second resolution, so no DNS-rebinding window).
 * Redirects are followed up to the policy's max; the body is read up to its cap.
 */
export async function egressFetch(
  policy: EgressPolicy,
  resolve: Resolver,
  request: EgressRequest,
): Promise<EgressResponse> {
  let url = new URL(request.url);
  let { method, body } = request;
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => !RESERVED_HEADERS.has(name.toLowerCase())),
  );
  for (let hop = 0; ; hop += 1) {
    const response = await oneHop(policy, resolve, { url, method, headers, body, signal: request.signal });
    const location = response.headers.location;
    if (!REDIRECTS.has(response.status) || !location || policy.maxRedirects === 0) return response;
    if (hop >= policy.maxRedirects)
      throw new ToolError(
        'http_too_many_redirects',
        `${request.method} ${request.url}: more than ${policy.maxRedirects} redirects (DURA_EGRESS_MAX_REDIRECTS)`,
        { retryable: false },
      );
    const next = new URL(location, url);
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
    }
    if (next.origin !== url.origin)
      for (const name of Object.keys(headers))
        if (ORIGIN_CREDENTIALS.includes(name.toLowerCase())) delete headers[name];
    url = next;
  }
}

interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

async function oneHop(policy: EgressPolicy, resolve: Resolver, hop: Hop): Promise<EgressResponse> {
  const { url } = hop;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw deniedScheme(url.href, url.protocol);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const literal = parseIp(host);
  const addresses = literal ? [literal] : await resolveAll(resolve, host, hop);
  assertEgressAllowed(policy, { url: url.href, host, port, addresses });
  const options: RequestOptions = {
    host,
    port,
    path: `${url.pathname}${url.search}`,
    method: hop.method,
    headers: {
      ...hop.headers,
      host: url.host,
      ...(hop.body !== undefined ? { 'content-length': String(Buffer.byteLength(hop.body)) } : {}),
    },
    // Only the addresses just checked; a literal IP host never calls it (and was checked itself).
    lookup: pinnedLookup(addresses),
    // A fresh agent: no pooled socket, no proxy taken from the environment.
    agent: false,
    signal: hop.signal,
  };
  return exchange(url, options, hop.body, policy.maxResponseBytes);
}

async function resolveAll(resolve: Resolver, host: string, hop: Hop): Promise<IpAddress[]> {
  let found: readonly string[];
  try {
    found = await Promise.race([
      resolve(host),
      new Promise<never>((_, reject) => {
        if (hop.signal.aborted) reject(hop.signal.reason as Error);
        hop.signal.addEventListener('abort', () => reject(hop.signal.reason as Error), { once: true });
      }),
    ]);
  } catch (err) {
    throw new ToolError(
      'http_unreachable',
      `${hop.method} ${hop.url.href}: cannot resolve ${host}: ${(err as Error).message}`,
      {
        retryable: true,
        cause: err,
      },
    );
  }
  const addresses = found.map((text) => parseIp(text));
  if (addresses.length === 0 || addresses.some((ip) => ip === undefined))
    throw new ToolError(
      'http_unreachable',
      `${hop.method} ${hop.url.href}: ${host} resolved to no usable address`,
      {
        retryable: true,
      },
    );
  return addresses as IpAddress[];
}

function pinnedLookup(addresses: readonly IpAddress[]): LookupFunction {
  const pinned = addresses.map((ip) => ({ address: formatIp(ip), family: ip.family }));
  return (_hostname, options, callback) => {
    if (options.all) (callback as (err: null, all: typeof pinned) => void)(null, pinned);
    else callback(null, pinned[0]!.address, pinned[0]!.family);
  };
}

function exchange(
  url: URL,
  options: RequestOptions,
  body: string | undefined,
  cap: number,
): Promise<EgressResponse> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const tooLarge = () =>
    new ToolError(
      'http_response_too_large',
      `${options.method} ${url.href}: the response body passed the cap of ${cap} bytes (DURA_EGRESS_MAX_RESPONSE_BYTES); it was not read further and nothing of it is kept`,
      { retryable: false },
    );
  return new Promise<EgressResponse>((resolve, reject) => {
    const failed = (err: Error) =>
      reject(
        new ToolError('http_unreachable', `${options.method} ${url.href} failed: ${err.message}`, {
          retryable: true,
          cause: err,
        }),
      );
    const req = send(options, (res) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > cap) {
        req.destroy();
        reject(tooLarge());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > cap) {
          req.destroy();
          reject(tooLarge());
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', failed);
    });
    req.on('error', failed);
    req.end(body);
  });
}
