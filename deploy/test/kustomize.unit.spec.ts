import { describe, expect, it } from 'vitest';
import { createRenderer, strategicMerge } from './kustomize';
import { containersOf, replicasOf } from './pods';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
        - name: app
          image: example/app
          env:
            - name: A
              value: '1'
          resources:
            requests:
              cpu: 100m
        - name: sidecar
          image: example/sidecar:1.0
`;

function renderer(files: Record<string, string>) {
  return createRenderer((path) => {
    const text = files[path];
    if (text === undefined) throw new Error(`no file ${path}`);
    return text;
  });
}

describe('kustomize renderer', () => {
  it('patches a container by name, merging its env by name and its maps key by key', () => {
    const k = renderer({
      'base/kustomization.yaml': 'resources: [app.yaml]',
      'base/app.yaml': DEPLOYMENT,
      'o/kustomization.yaml': 'resources: [../base]\npatches:\n  - path: patch.yaml',
      'o/patch.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
        - name: app
          env:
            - name: B
              value: '2'
          resources:
            limits:
              cpu: '1'
`,
    });
    const [app] = k.build('o');
    expect(containersOf(app!).map(({ container }) => container)).toEqual([
      {
        name: 'app',
        image: 'example/app',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        resources: { requests: { cpu: '100m' }, limits: { cpu: '1' } },
      },
      { name: 'sidecar', image: 'example/sidecar:1.0' },
    ]);
  });

  it('sets namespace (not on cluster-scoped kinds), replicas, and image names and tags', () => {
    const k = renderer({
      'o/kustomization.yaml': `namespace: ns
resources: [app.yaml, ns.yaml]
replicas:
  - name: app
    count: 3
images:
  - name: example/app
    newTag: '2.0'
  - name: example/sidecar
    newName: registry.example.com/sidecar
`,
      'o/app.yaml': DEPLOYMENT,
      'o/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n',
    });
    const [app, ns] = k.build('o');
    expect(app?.metadata.namespace).toBe('ns');
    expect(replicasOf(app!)).toBe(3);
    const images = containersOf(app!).map(({ container }) => container.image);
    expect(images).toEqual(['example/app:2.0', 'registry.example.com/sidecar:1.0']);
    expect(ns?.metadata).toEqual({ name: 'ns' });
  });

  it('adds the resources of components, and refuses fields it does not implement, duplicates and orphan patches', () => {
    const files = {
      'o/kustomization.yaml': 'resources: [app.yaml]\ncomponents: [../c]',
      'o/app.yaml': DEPLOYMENT,
      'c/kustomization.yaml': 'kind: Component\nresources: [extra.yaml]',
      'c/extra.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n',
    };
    expect(
      renderer(files)
        .build('o')
        .map((o) => o.kind),
    ).toEqual(['Deployment', 'ConfigMap']);
    expect(() =>
      renderer({ ...files, 'o/kustomization.yaml': 'resources: [app.yaml]\nconfigMapGenerator: []' }).build(
        'o',
      ),
    ).toThrow(/does not implement configMapGenerator/);
    expect(() =>
      renderer({ ...files, 'o/kustomization.yaml': 'resources: [app.yaml, app.yaml]' }).build('o'),
    ).toThrow(/Deployment\/\/app is defined twice/);
    expect(() =>
      renderer({
        ...files,
        'o/kustomization.yaml': 'resources: [app.yaml]\npatches:\n  - path: extra.yaml',
        'o/extra.yaml': files['c/extra.yaml'],
      }).build('o'),
    ).toThrow(/no ConfigMap extra to patch/);
  });

  it('replaces lists without a merge key and deletes fields patched to null', () => {
    expect(strategicMerge({ args: ['a', 'b'], keep: 1, drop: 2 }, { args: ['c'], drop: null })).toEqual({
      args: ['c'],
      keep: 1,
    });
  });
});
