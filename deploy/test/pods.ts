// Reading rendered objects as their Kubernetes types: pod templates, containers, probes, and the environment a
// container starts with.
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { K8sObject } from './kustomize';

export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet'];

/** The object `kind`/`name` of a render, as type `T` (one of kubernetes-models' I* interfaces); throws if absent. */
export function get<T>(objects: K8sObject[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`the render has no ${kind} ${name}`);
  return found as unknown as T;
}

interface Workload {
  spec?: {
    replicas?: number;
    template?: { metadata?: { labels?: Record<string, string> }; spec?: IPodSpec };
  };
}

export function podSpec(workload: K8sObject): IPodSpec {
  const spec = (workload as Workload).spec?.template?.spec;
  if (!spec) throw new Error(`${workload.kind} ${workload.metadata.name} has no pod template`);
  return spec;
}

export function podLabels(workload: K8sObject): Record<string, string> {
  return (workload as Workload).spec?.template?.metadata?.labels ?? {};
}

export function replicasOf(workload: K8sObject): number | undefined {
  return (workload as Workload).spec?.replicas;
}

export function containersOf(workload: K8sObject): { container: IContainer; init: boolean }[] {
  const spec = podSpec(workload);
  return [
    ...(spec.initContainers ?? []).map((container) => ({ container, init: true })),
    ...spec.containers.map((container) => ({ container, init: false })),
  ];
}

export function mainContainer(workload: K8sObject): IContainer {
  const found = podSpec(workload).containers.find((c) => c.name === workload.metadata.name);
  if (!found) throw new Error(`${workload.metadata.name} has no container of its own name`);
  return found;
}

/** A Secret not rendered with the manifests (created by the operator) stands in with these values. */
export type ExternalSecrets = Record<string, Record<string, string>>;

interface EnvSource {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/**
 * The environment `container` starts with: ConfigMaps and Secrets through `envFrom`, then `env`. Values of
 * Secrets outside `objects` come from `external`; a reference to something that exists in neither is a problem.
 */
export function containerEnv(
  container: IContainer,
  objects: K8sObject[],
  external: ExternalSecrets,
): { env: Record<string, string>; problems: string[] } {
  const env: Record<string, string> = {};
  const problems: string[] = [];
  const source = (kind: 'ConfigMap' | 'Secret', name: string): Record<string, string> | undefined => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name) as EnvSource | undefined;
    if (found) return { ...found.data, ...found.stringData };
    return kind === 'Secret' ? external[name] : undefined;
  };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const values = ref?.name ? source(from.configMapRef ? 'ConfigMap' : 'Secret', ref.name) : undefined;
    if (values) Object.assign(env, values);
    else if (!ref?.optional) problems.push(`${container.name}: envFrom ${ref?.name} does not exist`);
  }
  for (const entry of container.env ?? []) {
    const secret = entry.valueFrom?.secretKeyRef;
    const ref = secret ?? entry.valueFrom?.configMapKeyRef;
    if (!ref) {
      env[entry.name] = entry.value ?? '';
      continue;
    }
    const value = ref.name ? source(secret ? 'Secret' : 'ConfigMap', ref.name)?.[ref.key] : undefined;
    if (value === undefined)
      problems.push(`${container.name}: ${entry.name} refers to missing ${ref.name}/${ref.key}`);
    else env[entry.name] = value;
  }
  return { env, problems };
}

/** The port number behind a probe's or a container's named port. */
export function portNumber(container: IContainer, port: string | number | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return (container.ports ?? []).find((p) => p.name === port)?.containerPort;
}

/** Problems against the "restricted" Pod Security Standard, for the fields these manifests set. */
export function restrictedProblems(workload: K8sObject): string[] {
  const spec = podSpec(workload);
  const name = `${workload.kind} ${workload.metadata.name}`;
  const problems: string[] = [];
  const pod = spec.securityContext ?? {};
  if (pod.runAsNonRoot !== true) problems.push(`${name}: runAsNonRoot is not true`);
  if (pod.runAsUser === 0) problems.push(`${name}: runs as root`);
  if (pod.seccompProfile?.type !== 'RuntimeDefault')
    problems.push(`${name}: seccomp profile is not RuntimeDefault`);
  for (const { container } of containersOf(workload)) {
    const sc = container.securityContext ?? {};
    if (sc.allowPrivilegeEscalation !== false)
      problems.push(`${name}/${container.name}: privilege escalation allowed`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL'))
      problems.push(`${name}/${container.name}: capabilities not dropped`);
    if (sc.privileged === true || sc.runAsUser === 0)
      problems.push(`${name}/${container.name}: privileged or root`);
  }
  return problems;
}

/** One reference of a pod to a Secret: the whole Secret (envFrom) or one key of it (env, a volume's items). */
export interface SecretReference {
  workload: string;
  /** How the pod uses it: `envFrom`, `env NAME`, or `volume NAME`. */
  via: string;
  secret: string;
  key?: string;
  optional: boolean;
}

/** Every reference to a Secret in the pod templates of `objects`: what the kubelet needs before a pod starts. */
export function secretReferences(objects: K8sObject[]): SecretReference[] {
  const refs: SecretReference[] = [];
  for (const workload of objects.filter((o) => WORKLOAD_KINDS.includes(o.kind))) {
    const name = `${workload.kind} ${workload.metadata.name}`;
    for (const { container } of containersOf(workload)) {
      const where = `${name}/${container.name}`;
      for (const from of container.envFrom ?? [])
        if (from.secretRef?.name)
          refs.push({
            workload: where,
            via: 'envFrom',
            secret: from.secretRef.name,
            optional: from.secretRef.optional === true,
          });
      for (const entry of container.env ?? []) {
        const ref = entry.valueFrom?.secretKeyRef;
        if (ref?.name)
          refs.push({
            workload: where,
            via: `env ${entry.name}`,
            secret: ref.name,
            key: ref.key,
            optional: ref.optional === true,
          });
      }
    }
    for (const volume of podSpec(workload).volumes ?? []) {
      const secret = volume.secret;
      if (!secret?.secretName) continue;
      const base = { workload: name, via: `volume ${volume.name}`, secret: secret.secretName };
      const optional = secret.optional === true;
      if (!secret.items?.length) refs.push({ ...base, optional });
      for (const item of secret.items ?? []) refs.push({ ...base, key: item.key, optional });
    }
  }
  return refs;
}

/**
 * What stops these manifests from starting when only the Secrets in `objects` and `existing` exist: one line per
 * required Secret or key that is missing, naming it and who needs it. [] when every pod can start.
 */
export function missingSecrets(objects: K8sObject[], existing: ExternalSecrets): string[] {
  const values = (name: string): Record<string, string> | undefined => {
    const found = objects.find((o) => o.kind === 'Secret' && o.metadata.name === name) as
      EnvSource | undefined;
    return found ? { ...found.data, ...found.stringData } : existing[name];
  };
  return secretReferences(objects)
    .filter((ref) => !ref.optional)
    .flatMap((ref) => {
      const secret = values(ref.secret);
      if (!secret) return [`Secret ${ref.secret} is missing (${ref.workload}, ${ref.via})`];
      if (ref.key !== undefined && !(ref.key in secret))
        return [`Secret ${ref.secret} has no key ${ref.key} (${ref.workload}, ${ref.via})`];
      return [];
    });
}
