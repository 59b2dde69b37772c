// What the deploy tests read: files of this repository, the rendered overlays, and each service's configuration
// schema (the truth about which environment variables a service reads).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { repoRoot } from '@dura/testing';
import { PlannerConfigSchema } from '@dura/planner';
import { ProjectorConfigSchema } from '@dura/projector';
import { GatewayConfigSchema } from '@dura/tool-gateway';
import { WorkerConfigSchema } from '@dura/worker';
import { createRenderer, parseYamlDocuments } from './kustomize';

export const ROOT = repoRoot();

export function readRepoFile(...path: string[]): string {
  return readFileSync(join(ROOT, ...path), 'utf8');
}

export function readYaml(...path: string[]): unknown {
  const [doc] = parseYamlDocuments(readRepoFile(...path), path.join('/'));
  return doc;
}

/** Renders deploy/<dir> (a kustomization directory), or an in-memory kustomization placed there. */
export const kustomize = createRenderer((path) => readRepoFile('deploy', path));

export type ServiceName = 'planner' | 'tool-gateway' | 'worker' | 'projector';

export interface ServiceFacts {
  schema: z.ZodObject;
  /** The variable naming the port of `/healthz`. */
  healthPortVar: 'METRICS_PORT' | 'PROJECTOR_HTTP_PORT';
  /** Whether the service keeps tables in Postgres (and so has migrations). */
  usesDatabase: boolean;
}

export const SERVICES: Record<ServiceName, ServiceFacts> = {
  planner: { schema: PlannerConfigSchema, healthPortVar: 'METRICS_PORT', usesDatabase: false },
  'tool-gateway': { schema: GatewayConfigSchema, healthPortVar: 'METRICS_PORT', usesDatabase: true },
  // The planner and the gateway in one process: the gateway's tables (docs/workers.md).
  worker: { schema: WorkerConfigSchema, healthPortVar: 'METRICS_PORT', usesDatabase: true },
  projector: { schema: ProjectorConfigSchema, healthPortVar: 'PROJECTOR_HTTP_PORT', usesDatabase: true },
};

export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

/** Variables a service may be given: its schema's keys and the OpenTelemetry SDK's standard ones. */
export function unknownVariables(service: ServiceName, names: Iterable<string>): string[] {
  const known = new Set(Object.keys(SERVICES[service].schema.shape));
  return [...names].filter((name) => !known.has(name) && !name.startsWith('OTEL_'));
}

/** The problems the service's own start-up validation would report for this environment, or []. */
export function configProblems(service: ServiceName, env: Record<string, string>): string[] {
  const parsed = SERVICES[service].schema.safeParse(env);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}
