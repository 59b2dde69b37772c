import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { INamespace } from 'kubernetes-models/v1/Namespace';
import { describe, expect, it } from 'vitest';
import type { K8sObject } from './kustomize';
import { schemaProblems } from './k8s-schemas';
import { PROD_SECRETS } from './prod-secrets';
import {
  containerEnv,
  containersOf,
  get,
  mainContainer,
  podLabels,
  podSpec,
  portNumber,
  restrictedProblems,
  WORKLOAD_KINDS,
  type ExternalSecrets,
} from './pods';
import {
  configProblems,
  kustomize,
  ROOT,
  SERVICE_NAMES,
  SERVICES,
  unknownVariables,
  type ServiceName,
} from './repo';

const VARIANTS: Record<string, { render: () => K8sObject[]; secrets: ExternalSecrets }> = {
  base: { render: () => kustomize.build('base'), secrets: PROD_SECRETS },
  'overlays/dev': { render: () => kustomize.build('overlays/dev'), secrets: {} },
  'overlays/prod': { render: () => kustomize.build('overlays/prod'), secrets: PROD_SECRETS },
  'overlays/prod with components/hpa-cpu': {
    render: () =>
      kustomize.render(
        { ...kustomize.loadKustomization('overlays/prod'), components: ['../../components/hpa-cpu'] },
        'overlays/prod',
      ),
    secrets: PROD_SECRETS,
  },
};
const OVERLAYS = Object.keys(VARIANTS).filter((name) => name !== 'base');

const workloads = (objects: K8sObject[]) => objects.filter((o) => WORKLOAD_KINDS.includes(o.kind));
const deployment = (objects: K8sObject[], service: string) => get<K8sObject>(objects, 'Deployment', service);

describe.each(Object.keys(VARIANTS))('%s', (variant) => {
  const { render, secrets } = VARIANTS[variant]!;
  const objects = render();
  const envOf = (service: ServiceName) =>
    containerEnv(mainContainer(deployment(objects, service)), objects, secrets);

  it('renders, and every object matches the schema of its API version and kind', () => {
    expect(objects.length).toBeGreaterThan(10);
    expect(objects.flatMap(schemaProblems)).toEqual([]);
  });

  it('runs each service as a Deployment with a PodDisruptionBudget that selects its pods', () => {
    for (const service of SERVICE_NAMES) {
      const pdb = get<IPodDisruptionBudget>(objects, 'PodDisruptionBudget', service);
      expect(podLabels(deployment(objects, service))).toMatchObject(
        pdb.spec?.selector?.matchLabels ?? { missing: 1 },
      );
      expect(pdb.spec?.maxUnavailable).toBe(1);
    }
  });

  it('gives every Dura container requests and limits, and probes /healthz on the port the service serves it on', () => {
    for (const service of SERVICE_NAMES) {
      const healthPort = Number(envOf(service).env[SERVICES[service].healthPortVar]);
      for (const { container, init } of containersOf(deployment(objects, service))) {
        for (const amounts of [container.resources?.requests, container.resources?.limits])
          expect(amounts, `${service}/${container.name}`).toMatchObject({
            cpu: expect.anything(),
            memory: expect.anything(),
          });
        if (init) continue;
        const readyPath = service === 'projector' ? '/healthz' : '/readyz';
        for (const [probe, path] of [
          [container.startupProbe, '/healthz'],
          [container.readinessProbe, readyPath],
          [container.livenessProbe, '/healthz'],
        ] as const) {
          expect(probe?.httpGet?.path, service).toBe(path);
          expect(portNumber(container, probe?.httpGet?.port), service).toBe(healthPort);
        }
      }
    }
  });

  it('gives each service only variables its config schema declares (or OTEL_*), with values its validation accepts', () => {
    for (const service of SERVICE_NAMES) {
      const { env, problems } = envOf(service);
      expect(problems, service).toEqual([]);
      expect(unknownVariables(service, Object.keys(env)), service).toEqual([]);
      expect(configProblems(service, env), service).toEqual([]);
    }
  });

  it('lets a SIGTERM drain (SHUTDOWN_GRACE_MS) finish within terminationGracePeriodSeconds', () => {
    for (const service of SERVICE_NAMES) {
      const graceMs = Number(envOf(service).env.SHUTDOWN_GRACE_MS ?? 25_000);
      const seconds = podSpec(deployment(objects, service)).terminationGracePeriodSeconds ?? 30;
      expect(seconds * 1000, service).toBeGreaterThanOrEqual(graceMs + 10_000);
    }
  });

  it('applies the gateway and projector migrations in an init container of the same image and database', () => {
    for (const service of SERVICE_NAMES) {
      const workload = deployment(objects, service);
      const [migrate] = podSpec(workload).initContainers ?? [];
      if (!SERVICES[service].usesDatabase) {
        expect(migrate, service).toBeUndefined();
        continue;
      }
      const entry = `deploy/image/migrate-${service}.ts`;
      expect(existsSync(join(ROOT, entry))).toBe(true);
      expect(migrate?.command).toEqual(['node', '--import', 'tsx', entry]);
      expect(migrate?.image).toBe(mainContainer(workload).image);
      const databaseRef = (env = migrate?.env) => env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom;
      expect(databaseRef()).toBeDefined();
      expect(databaseRef()).toEqual(databaseRef(mainContainer(workload).env));
    }
  });
});

describe.each(OVERLAYS)('%s pods', (variant) => {
  const objects = VARIANTS[variant]!.render();

  it('all meet the restricted Pod Security Standard, which the namespace enforces', () => {
    expect(workloads(objects).flatMap(restrictedProblems)).toEqual([]);
    const namespace = get<INamespace>(objects, 'Namespace', 'dura');
    expect(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(objects.filter((o) => o.kind !== 'Namespace').every((o) => o.metadata.namespace === 'dura')).toBe(
      true,
    );
  });

  it('run Dura containers with a read-only root, as the image user, without a service account token', () => {
    for (const service of SERVICE_NAMES) {
      const spec = podSpec(deployment(objects, service));
      expect(spec.securityContext?.runAsUser).toBe(1000);
      expect(spec.automountServiceAccountToken).toBe(false);
      for (const { container } of containersOf(deployment(objects, service)))
        expect(container.securityContext?.readOnlyRootFilesystem, container.name).toBe(true);
    }
  });

  it('pin every image to a tag, never latest', () => {
    const tag = variant === 'overlays/dev' ? 'dev' : '0.1.0';
    for (const w of workloads(objects))
      for (const { container } of containersOf(w)) {
        const image = container.image ?? '';
        expect(image, `${w.metadata.name}/${container.name}`).toMatch(/:[\w.-]+$/);
        expect(image).not.toMatch(/:latest$/);
        if (image.startsWith('dura/')) expect(image.endsWith(`:${tag}`), image).toBe(true);
      }
  });
});
