// The production overlay fails closed: without its Secrets it neither validates nor starts; with them every service
// talks to NATS over TLS as its own user, the API requires authentication, and NetworkPolicies deny what Dura does
// not use. The dev overlay stays open for convenience, and says so.
import type { IVolume } from 'kubernetes-models/v1/Volume';
import { describe, expect, it } from 'vitest';
import { resolveNatsSecurity } from '@dura/contracts';
import { loadPlannerConfig, parseTenantAgents } from '@dura/planner';
import { loadProjectorConfig } from '@dura/projector';
import type { K8sObject } from './kustomize';
import { allows, policiesSelecting, type Endpoint } from './network-policies';
import {
  containerEnv,
  get,
  mainContainer,
  missingSecrets,
  podLabels,
  podSpec,
  secretReferences,
  WORKLOAD_KINDS,
} from './pods';
import { PROD_SECRETS } from './prod-secrets';
import { kustomize, readRepoFile, SERVICE_NAMES, type ServiceName } from './repo';

const prod = kustomize.build('overlays/prod');
const dev = kustomize.build('overlays/dev');
const deployment = (objects: K8sObject[], service: string) => get<K8sObject>(objects, 'Deployment', service);
const envOf = (objects: K8sObject[], service: ServiceName) =>
  containerEnv(mainContainer(deployment(objects, service)), objects, PROD_SECRETS).env;

/** The Secret volume mounted at the directory of `file` in `service`'s container, with the key behind the file. */
function secretBehind(objects: K8sObject[], service: ServiceName, file: string) {
  const workload = deployment(objects, service);
  const mount = (mainContainer(workload).volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath}/`));
  const volume: IVolume | undefined = (podSpec(workload).volumes ?? []).find((v) => v.name === mount?.name);
  const path = file.slice((mount?.mountPath.length ?? 0) + 1);
  return {
    secret: volume?.secret?.secretName,
    key: volume?.secret?.items?.find((item) => item.path === path)?.key,
    optional: volume?.secret?.optional === true,
    readOnly: mount?.readOnly === true,
  };
}

describe('the prod overlay without its Secrets', () => {
  it('does not validate: the check names every Secret it lacks', () => {
    const problems = missingSecrets(prod, {}).join('\n');
    for (const name of Object.keys(PROD_SECRETS)) expect(problems).toContain(`Secret ${name} is missing`);
    expect(missingSecrets(prod, PROD_SECRETS)).toEqual([]);
  });

  it.each(Object.keys(PROD_SECRETS))('does not validate without %s, and names it', (name) => {
    const { [name]: _left, ...others } = PROD_SECRETS;
    const problems = missingSecrets(prod, others);
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem).toContain(`Secret ${name} is missing`);
  });

  it('does not validate when a Secret lacks a key, and names the key', () => {
    const { NATS_PASSWORD: _left, ...user } = PROD_SECRETS['dura-nats-projector']!;
    expect(missingSecrets(prod, { ...PROD_SECRETS, 'dura-nats-projector': user })).toEqual([
      'Secret dura-nats-projector has no key NATS_PASSWORD (Deployment projector/projector, env NATS_PASSWORD)',
    ]);
  });

  it('does not start: every reference to them is required, so the kubelet holds the pod back', () => {
    const refs = secretReferences(prod);
    // secretKeyRef without `optional` is CreateContainerConfigError; a secret volume without it never mounts.
    expect(refs.filter((ref) => ref.optional && ref.secret in PROD_SECRETS)).toEqual([]);
    // The one optional Secret: model API keys, which a deployment without model-backed agents does not have.
    expect([...new Set(refs.filter((ref) => ref.optional).map((ref) => ref.secret))]).toEqual([
      'dura-model-keys',
    ]);
    // Each key the operator must create is referenced by name, so a Secret without it stops the pod too.
    const keyed = new Set(refs.filter((ref) => ref.key).map((ref) => `${ref.secret}/${ref.key}`));
    for (const [secret, values] of Object.entries(PROD_SECRETS))
      for (const key of Object.keys(values)) expect(keyed, `${secret}/${key}`).toContain(`${secret}/${key}`);
    // And the overlay ships no credentials of its own.
    expect(prod.filter((o) => o.kind === 'Secret')).toEqual([]);
  });
});

describe('the prod overlay with its Secrets', () => {
  it.each(SERVICE_NAMES)('connects %s to NATS over TLS, as its own least-privilege user', (service) => {
    const env = envOf(prod, service);
    expect(new URL(env.NATS_URL ?? '').protocol).toBe('tls:');
    const resolved = resolveNatsSecurity(env);
    if (!resolved.ok) throw new Error(resolved.problems.join('; '));
    expect(resolved.security.auth).toEqual({
      kind: 'user',
      user: PROD_SECRETS[`dura-nats-${service}`]?.NATS_USER,
      password: PROD_SECRETS[`dura-nats-${service}`]?.NATS_PASSWORD,
    });
    const caFile = resolved.security.tls?.caFile ?? '';
    expect(secretBehind(prod, service, caFile)).toEqual({
      secret: 'dura-nats-tls',
      key: 'ca.crt',
      optional: false,
      readOnly: true,
    });
    expect(env.NATS_INBOX_PREFIX).toMatch(/^_INBOX\.(planner|gateway|worker|projector)$/);
  });

  it('requires API authentication: the projector reads its tokens from a Secret and refuses to start without them', () => {
    const env = envOf(prod, 'projector');
    const config = loadProjectorConfig(env);
    expect(config.PROJECTOR_AUTH_REQUIRED).toBe(true);
    expect(secretBehind(prod, 'projector', config.PROJECTOR_API_TOKENS_FILE ?? '')).toEqual({
      secret: 'dura-api-tokens',
      key: 'tokens.json',
      optional: false,
      readOnly: true,
    });
    expect(() => loadProjectorConfig({ ...env, PROJECTOR_API_TOKENS_FILE: undefined })).toThrow(
      /PROJECTOR_AUTH_REQUIRED: is true but no credentials/,
    );
  });

  it.each(['planner', 'worker'] as const)(
    'says which agents each tenant may start on the %s: no tenant but default starts any agent until listed, no inline plans',
    (service) => {
      const config = loadPlannerConfig(envOf(prod, service));
      expect(config.DURA_INLINE_PLANS).toBe(false);
      const grants = parseTenantAgents(config.PLANNER_TENANT_AGENTS ?? '');
      expect(grants.fallback).toEqual([]);
      for (const [tenant, granted] of grants.byTenant)
        if (tenant !== 'default') expect(granted, `tenant ${tenant}`).not.toBe('all');
    },
  );

  it('sets DURA_BIND_HOST=0.0.0.0 explicitly: inside a pod the probes and Services reach every service', () => {
    for (const objects of [prod, dev])
      for (const service of SERVICE_NAMES)
        expect(envOf(objects, service).DURA_BIND_HOST, service).toBe('0.0.0.0');
  });
});

describe('the dev overlay', () => {
  it('stays convenient: starts with no Secret made by hand, open NATS and API, and says it is open', () => {
    expect(missingSecrets(dev, {})).toEqual([]);
    const env = envOf(dev, 'projector');
    expect(env.PROJECTOR_AUTH_REQUIRED).toBeUndefined();
    expect(env.NATS_TLS_CA_FILE).toBeUndefined();
    expect(dev.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
    expect(readRepoFile('deploy/overlays/dev/kustomization.yaml')).toMatch(/Open on purpose/);
  });
});

describe('the prod NetworkPolicies', () => {
  const pod = (name: string, namespace = 'dura'): Endpoint => ({
    namespace,
    labels: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'dura' },
  });
  const labelled = (o: K8sObject): Endpoint => ({ namespace: 'dura', labels: podLabels(o) });
  const workloads = prod.filter((o) => WORKLOAD_KINDS.includes(o.kind));
  const nats = { namespace: 'nats', labels: { 'app.kubernetes.io/name': 'nats' } };
  const ingress = { namespace: 'ingress-nginx', labels: { 'app.kubernetes.io/name': 'ingress-nginx' } };
  const prometheus = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } };
  const dns = { namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } };
  const database = { ip: '10.20.30.40' };
  const can = (from: Endpoint, to: Endpoint, port: number, protocol?: 'TCP' | 'UDP') =>
    allows(prod, { from, to, port, ...(protocol ? { protocol } : {}) });

  it('deny everything by default, both ways, for every pod, and open some path for every service', () => {
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual([
      'otel-collector',
      'planner',
      'projector',
      'tool-gateway',
      'worker',
    ]);
    const deny = get<K8sObject>(prod, 'NetworkPolicy', 'default-deny');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    for (const workload of workloads) {
      const names = (direction: 'Ingress' | 'Egress') =>
        policiesSelecting(prod, labelled(workload), direction).map((p) => p.metadata?.name);
      expect(names('Ingress'), workload.metadata.name).toContain('default-deny');
      expect(names('Egress'), workload.metadata.name).toContain('default-deny');
      const allowing = new Set([...names('Ingress'), ...names('Egress')]);
      allowing.delete('default-deny');
      allowing.delete('allow-dns');
      expect(allowing.size, `${workload.metadata.name} is selected by an allow policy`).toBeGreaterThan(0);
      expect(can(labelled(workload), dns, 53, 'UDP'), workload.metadata.name).toBe(true);
    }
  });

  it('let the services reach NATS on 4222 and nothing else of it', () => {
    for (const service of SERVICE_NAMES) {
      expect(can(pod(service), nats, 4222), service).toBe(true);
      expect(can(pod(service), nats, 8222), `${service} to the NATS monitor`).toBe(false);
    }
    expect(can(pod('otel-collector'), nats, 4222)).toBe(false);
  });

  it('let only the gateway, the worker and the projector reach Postgres', () => {
    expect(can(pod('tool-gateway'), database, 5432)).toBe(true);
    expect(can(pod('worker'), database, 5432)).toBe(true);
    expect(can(pod('projector'), database, 5432)).toBe(true);
    expect(can(pod('planner'), database, 5432)).toBe(false);
    expect(can(pod('otel-collector'), database, 5432)).toBe(false);
  });

  it('let the ingress controller reach the projector API, and nothing else reach any service', () => {
    expect(can(ingress, pod('projector'), 8080)).toBe(true);
    expect(can(ingress, pod('planner'), 9464)).toBe(false);
    expect(can(ingress, pod('tool-gateway'), 9464)).toBe(false);
    expect(can(ingress, pod('worker'), 9464)).toBe(false);
    expect(can(pod('app', 'default'), pod('projector'), 8080)).toBe(false);
    // No lateral moves: a compromised service reaches no other service.
    for (const from of SERVICE_NAMES)
      for (const [to, port] of [
        ['planner', 9464],
        ['tool-gateway', 9464],
        ['worker', 9464],
        ['projector', 8080],
      ] as const)
        if (from !== to) expect(can(pod(from), pod(to), port), `${from} -> ${to}`).toBe(false);
    // Prometheus scrapes the metrics ports.
    expect(can(prometheus, pod('planner'), 9464)).toBe(true);
    expect(can(prometheus, pod('worker'), 9464)).toBe(true);
    expect(can(prometheus, pod('projector'), 8080)).toBe(true);
  });

  it('let the services, and only they, send spans to the collector', () => {
    for (const service of SERVICE_NAMES) expect(can(pod(service), pod('otel-collector'), 4318)).toBe(true);
    expect(can(ingress, pod('otel-collector'), 4318)).toBe(false);
    expect(can(pod('app', 'default'), pod('otel-collector'), 4317)).toBe(false);
  });

  it('let the planner, the gateway and the worker reach public HTTPS only: no private, metadata or loopback address', () => {
    for (const service of ['planner', 'tool-gateway', 'worker']) {
      expect(can(pod(service), { ip: '203.0.113.10' }, 443), service).toBe(true);
      expect(can(pod(service), { ip: '203.0.113.10' }, 80), service).toBe(false);
      for (const ip of [
        '169.254.169.254',
        '10.0.0.1',
        '172.16.5.4',
        '192.168.1.1',
        '100.64.0.1',
        '127.0.0.1',
      ])
        expect(can(pod(service), { ip }, 443), `${service} -> ${ip}`).toBe(false);
    }
    expect(can(pod('projector'), { ip: '203.0.113.10' }, 443)).toBe(false);
  });
});
