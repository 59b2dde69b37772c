import { request } from 'node:http';
import { loadContainerModule } from './load-container-module';

export type InfraMode = 'local' | 'containers';

let cached: Promise<InfraMode> | undefined;

/** Asks the Docker engine for `GET /_ping` (1 s budget); any failure means "no engine". */
function dockerAnswers(): Promise<boolean> {
  const host = process.env['DOCKER_HOST'] ?? 'unix:///var/run/docker.sock';
  let target: { socketPath: string } | { host: string; port: number };
  if (host.startsWith('unix://')) {
    target = { socketPath: host.slice('unix://'.length) };
  } else if (host.startsWith('tcp://')) {
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  } else {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', method: 'GET', timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

async function detect(): Promise<InfraMode> {
  const wanted = process.env['DURA_TEST_INFRA'] ?? 'auto';
  if (wanted === 'local' || wanted === 'containers') return wanted;
  if (wanted !== 'auto')
    throw new Error(`DURA_TEST_INFRA must be local, containers or auto; got "${wanted}"`);
  if (!(await dockerAnswers())) return 'local';
  try {
    await loadContainerModule('testcontainers', () => import('testcontainers'));
    return 'containers';
  } catch (error) {
    // auto must not fail where local infrastructure would work; say why containers were not used.
    process.stderr.write(
      `[dura-testing] Docker answers, using local infrastructure: ${(error as Error).message}\n`,
    );
    return 'local';
  }
}

/** Where test infrastructure runs, from DURA_TEST_INFRA (default auto: containers only if Docker answers). */
export function infraMode(): Promise<InfraMode> {
  cached ??= detect();
  return cached;
}
