// Each service started with default settings (as on a workstation or a VM, outside a container) serves its API,
// /metrics, /healthz and /readyz on loopback only, and its log line names the address it is bound to; the images
// and manifests set DURA_BIND_HOST=0.0.0.0 (deploy/test/manifests.unit.spec.ts, dockerfiles.unit.spec.ts).
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnTsEntry, useTestInfra, type ManagedProcess } from '@dura/testing';

const infra = useTestInfra();
const processes: ManagedProcess[] = [];

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGKILL')));
});

const otherAddresses = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
  .map((a) => a!.address);

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

const LISTENING = {
  planner: 'metrics listening',
  'tool-gateway': 'metrics listening',
  projector: 'projector api listening',
} as const;
type Service = keyof typeof LISTENING;

/** Starts `service` with only what it needs to run (plus `env`) and returns the address its log line names. */
async function boundAddress(service: Service, env: Record<string, string> = {}): Promise<string> {
  const proc = spawnTsEntry({
    name: service,
    entry: `services/${service}/src/main.ts`,
    env: {
      NATS_URL: infra().nats.url,
      DATABASE_URL: infra().db.url,
      METRICS_PORT: '0',
      PROJECTOR_HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...env,
    },
  });
  processes.push(proc);
  // The whole line that names the listener: a JSON record (LOG_FORMAT=json), maybe after a prefix.
  const line = await proc.waitForOutput(new RegExp(`[^\\n]*${LISTENING[service]}[^\\n]*\\n`), 120_000);
  const json = JSON.parse(line.slice(line.indexOf('{'))) as { address?: string };
  if (!json.address) throw new Error(`${service} logged no address: ${line}`);
  return json.address;
}

const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));

describe('a service with default settings', () => {
  it.each(Object.keys(LISTENING) as Service[])(
    '%s listens on 127.0.0.1 only, and says so',
    async (service) => {
      const address = await boundAddress(service);
      expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(await accepts('127.0.0.1', portOf(address))).toBe(true);
      for (const other of otherAddresses) expect(await accepts(other, portOf(address)), other).toBe(false);
    },
    180_000,
  );
});

describe('a service given DURA_BIND_HOST=0.0.0.0 (what the images set)', () => {
  it('listens on every interface, and its log line names 0.0.0.0', async () => {
    const address = await boundAddress('planner', { DURA_BIND_HOST: '0.0.0.0' });
    expect(address).toMatch(/^0\.0\.0\.0:\d+$/);
    for (const other of otherAddresses) expect(await accepts(other, portOf(address)), other).toBe(true);
  }, 180_000);
});
