// Where the HTTP servers listen: loopback unless told otherwise, and the handle (and so the log line) names the
// address the socket is really bound to. Proven by connecting through this machine's other addresses.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { configFields, DEFAULT_BIND_HOST, startHttpServer, type HttpServerHandle } from '../src/index';
import { recordingLogger } from './infra';

const { log } = recordingLogger();
const servers: HttpServerHandle[] = [];

afterEach(async () => {
  await Promise.allSettled(servers.splice(0).map((server) => server.close()));
});

/** The machine's IPv4 addresses other than loopback (none in some sandboxes: then only the reports are checked). */
const otherAddresses = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
  .map((a) => a!.address);

/** Whether a TCP connection to host:port is accepted (true) or refused (false). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(10_000, () => socket.destroy(new Error('timeout')));
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function start(host?: string): Promise<HttpServerHandle> {
  const server = await startHttpServer({
    port: 0,
    ...(host === undefined ? {} : { host }),
    routes: [{ method: 'GET', path: '/healthz', handle: () => Promise.resolve({ status: 200, body: {} }) }],
    log,
  });
  servers.push(server);
  return server;
}

describe('the bind host of an HTTP server', () => {
  it('is 127.0.0.1 by default: reachable on loopback, refused on every other address of the machine', async () => {
    expect(DEFAULT_BIND_HOST).toBe('127.0.0.1');
    const server = await start();
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    for (const address of otherAddresses) expect(await accepts(address, server.port), address).toBe(false);
  });

  it('is every interface when 0.0.0.0 is asked for, and the handle says so', async () => {
    const server = await start('0.0.0.0');
    expect(server.address).toBe(`0.0.0.0:${server.port}`);
    // The URL stays one this machine can connect to.
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    for (const address of otherAddresses) expect(await accepts(address, server.port), address).toBe(true);
  });

  it('reports an IPv6 bind in brackets', async () => {
    const server = await start('::1');
    expect(server.address).toBe(`[::1]:${server.port}`);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe('DURA_BIND_HOST (configFields.bindHost)', () => {
  it('defaults to loopback and takes an address or a host name, nothing else', () => {
    expect(configFields.bindHost.parse(undefined)).toBe('127.0.0.1');
    expect(configFields.bindHost.parse('0.0.0.0')).toBe('0.0.0.0');
    expect(configFields.bindHost.parse('::')).toBe('::');
    expect(configFields.bindHost.parse('localhost')).toBe('localhost');
    expect(configFields.bindHost.safeParse('0.0.0.0:8080 ; rm').success).toBe(false);
    expect(configFields.bindHost.safeParse('http://0.0.0.0').success).toBe(false);
  });
});
