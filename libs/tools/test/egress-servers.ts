// HTTP servers for the egress tests: a witness that counts every request it receives (it must receive none),
// and an ordinary server (redirects, a large body, a slow answer) that the policy names explicitly.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  port: number;
  /** Requests received so far, as "METHOD path". */
  requests: string[];
  close(): Promise<void>;
}

async function listen(
  host: string,
  handle: (path: string, res: ServerResponse) => void,
): Promise<TestServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handle(req.url ?? '/', res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Listens on every loopback form (`::` is dual-stack: 127.0.0.1, ::1, ::ffff:127.0.0.1) and answers a secret. */
export function startWitness(secret: string): Promise<TestServer> {
  return listen('::', (_path, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(secret);
  });
}

/**
 * `/redirect?to=<url>&status=<code>` redirects; `/big?bytes=N[&declared=1]` streams N bytes (with a
 * Content-Length when `declared`); `/slow` never answers; anything else answers `allowed`.
 */
export function startTarget(): Promise<TestServer> {
  return listen('127.0.0.1', (path, res) => {
    const url = new URL(path, 'http://x');
    if (url.pathname === '/redirect') {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), {
        location: url.searchParams.get('to') ?? '/',
      });
      res.end('moved');
    } else if (url.pathname === '/big') {
      const bytes = Number(url.searchParams.get('bytes'));
      res.writeHead(200, {
        'content-type': 'text/plain',
        ...(url.searchParams.get('declared') ? { 'content-length': String(bytes) } : {}),
      });
      const chunk = Buffer.alloc(16_384, 'x');
      let left = bytes;
      const pump = (): void => {
        while (left > 0) {
          const part = chunk.subarray(0, Math.min(chunk.length, left));
          left -= part.length;
          if (!res.write(part)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    } else if (url.pathname === '/slow') {
      res.writeHead(200);
      res.write('partial');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reached: 'allowed' }));
    }
  });
}
