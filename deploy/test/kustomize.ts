// A minimal kustomize, enough to render deploy/ offline in tests: `resources` (files and directories),
// `components`, `patches` (strategic-merge files naming their target), `namespace`, `replicas` and `images`.
// Any other field is an error, so a manifest that starts using one fails here instead of rendering wrongly.
import { posix } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface Kustomization {
  apiVersion?: string;
  kind?: 'Kustomization' | 'Component';
  namespace?: string;
  resources?: string[];
  components?: string[];
  patches?: { path: string }[];
  replicas?: { name: string; count: number }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

/** Reads a file by its path relative to the deploy root; throws when it does not exist. */
export type ReadFile = (path: string) => string;

const SUPPORTED = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'components',
  'patches',
  'replicas',
  'images',
]);
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'StorageClass',
]);
/** Strategic-merge keys of the lists the patches may touch; any other list is replaced whole. */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
};

export function parseYamlDocuments(text: string, source: string): unknown[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${source}: invalid YAML: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value];
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectsIn(text: string, source: string): K8sObject[] {
  return parseYamlDocuments(text, source).map((doc) => {
    if (!isObject(doc) || typeof doc.kind !== 'string' || !isObject(doc.metadata))
      throw new Error(`${source}: every document must be a Kubernetes object with kind and metadata`);
    return doc as K8sObject;
  });
}

const idOf = (o: K8sObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Strategic merge of `patch` into `target` (both plain JSON), for the fields this repository patches. */
export function strategicMerge(target: unknown, patch: unknown, field = ''): unknown {
  if (Array.isArray(patch)) {
    const key = MERGE_KEYS[field];
    if (!key || !Array.isArray(target)) return structuredClone(patch);
    const merged = [...(target as unknown[])];
    for (const item of patch) {
      const at = merged.findIndex((t) => isObject(t) && isObject(item) && t[key] === item[key]);
      if (at >= 0) merged[at] = strategicMerge(merged[at], item);
      else merged.push(structuredClone(item));
    }
    return merged;
  }
  if (!isObject(patch) || !isObject(target)) return structuredClone(patch);
  const out: Record<string, unknown> = { ...target };
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete out[name];
    else out[name] = name in target ? strategicMerge(target[name], value, name) : structuredClone(value);
  }
  return out;
}

function podSpecs(o: K8sObject): Record<string, unknown>[] {
  const spec = o.spec;
  if (!isObject(spec)) return [];
  const template = isObject(spec.template) ? spec.template : undefined;
  return template && isObject(template.spec) ? [template.spec] : [];
}

function setImages(objects: K8sObject[], images: NonNullable<Kustomization['images']>): void {
  for (const pod of objects.flatMap(podSpecs)) {
    for (const list of [pod.containers, pod.initContainers]) {
      for (const container of Array.isArray(list) ? list : []) {
        if (!isObject(container) || typeof container.image !== 'string') continue;
        const match = /^([^:@]+(?::\d+\/[^:@]+)?)(?::([^@]+))?(@.+)?$/.exec(container.image);
        const rule = images.find((i) => i.name === match?.[1]);
        if (!match || !rule) continue;
        const tag = rule.newTag ?? match[2];
        container.image = `${rule.newName ?? match[1]}${tag ? `:${tag}` : ''}${match[3] ?? ''}`;
      }
    }
  }
}

/** Renders kustomizations from files read through `read` (paths relative to one root, with `/`). */
export function createRenderer(read: ReadFile) {
  function loadKustomization(dir: string): Kustomization {
    const path = posix.join(dir, 'kustomization.yaml');
    const [doc] = parseYamlDocuments(read(path), path);
    if (!isObject(doc)) throw new Error(`${path}: not a kustomization`);
    return doc;
  }

  function loadResource(dir: string, entry: string): K8sObject[] {
    const path = posix.join(dir, entry);
    if (/\.ya?ml$/.test(entry)) return objectsIn(read(path), path);
    return render(loadKustomization(path), path, 'Kustomization');
  }

  function applyComponent(objects: K8sObject[], dir: string): K8sObject[] {
    return transform(loadKustomization(dir), dir, objects, 'Component');
  }

  function transform(k: Kustomization, dir: string, input: K8sObject[], expected: string): K8sObject[] {
    const where = posix.join(dir, 'kustomization.yaml');
    if ((k.kind ?? 'Kustomization') !== expected) throw new Error(`${where}: expected kind ${expected}`);
    const unsupported = Object.keys(k).filter((field) => !SUPPORTED.has(field));
    if (unsupported.length > 0)
      throw new Error(
        `${where}: this renderer does not implement ${unsupported.join(', ')}; extend deploy/test/kustomize.ts`,
      );
    let objects = [...input, ...(k.resources ?? []).flatMap((entry) => loadResource(dir, entry))];
    for (const component of k.components ?? []) objects = applyComponent(objects, posix.join(dir, component));
    const seen = new Set<string>();
    for (const o of objects) {
      if (seen.has(idOf(o))) throw new Error(`${where}: ${idOf(o)} is defined twice`);
      seen.add(idOf(o));
    }
    for (const { path } of k.patches ?? []) {
      for (const patch of objectsIn(read(posix.join(dir, path)), posix.join(dir, path))) {
        const at = objects.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
        if (at < 0)
          throw new Error(`${posix.join(dir, path)}: no ${patch.kind} ${patch.metadata.name} to patch`);
        objects[at] = strategicMerge(objects[at], patch) as K8sObject;
      }
    }
    for (const { name, count } of k.replicas ?? []) {
      const target = objects.find(
        (o) => ['Deployment', 'StatefulSet'].includes(o.kind) && o.metadata.name === name,
      );
      if (!target || !isObject(target.spec))
        throw new Error(`${where}: replicas for unknown workload ${name}`);
      target.spec.replicas = count;
    }
    if (k.images) setImages(objects, k.images);
    if (k.namespace) {
      for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
    }
    return objects;
  }

  /** Renders the kustomization `k` as if it were `dir/kustomization.yaml`. */
  function render(k: Kustomization, dir: string, expected = 'Kustomization'): K8sObject[] {
    return transform(k, dir, [], expected);
  }

  return {
    /** Renders `dir/kustomization.yaml`, like `kustomize build dir`. */
    build: (dir: string): K8sObject[] => render(structuredClone(loadKustomization(dir)), dir),
    render,
    loadKustomization,
  };
}
