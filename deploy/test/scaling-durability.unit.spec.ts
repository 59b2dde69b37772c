import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IService } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { STREAMS } from '@dura/contracts';
import { PLANNER_CONSUMERS } from '@dura/planner';
import { GATEWAY_CONSUMER } from '@dura/tool-gateway';
import { parseYamlDocuments, type K8sObject } from './kustomize';
import { get, replicasOf } from './pods';
import { kustomize, readYaml } from './repo';

const prod = kustomize.build('overlays/prod');
const dev = kustomize.build('overlays/dev');
const prodHpa = kustomize.render(
  { ...kustomize.loadKustomization('overlays/prod'), components: ['../../components/hpa-cpu'] },
  'overlays/prod',
);
const data = (objects: K8sObject[], configMap: string): Record<string, string> =>
  get<IConfigMap>(objects, 'ConfigMap', configMap).data ?? {};
const servicePorts = (objects: K8sObject[], name: string): number[] =>
  (get<IService>(objects, 'Service', name).spec?.ports ?? []).map((p) => p.port);

/**
 * The durable consumers each autoscaled service takes its work from, as the services define them, each with the
 * variable that says how many of its messages one replica works on at once.
 */
const planning = [
  { consumer: PLANNER_CONSUMERS.decide, concurrency: 'PLANNER_CONCURRENCY' },
  { consumer: PLANNER_CONSUMERS.intake, concurrency: 'PLANNER_CONCURRENCY' },
];
const tools = [{ consumer: GATEWAY_CONSUMER, concurrency: 'GATEWAY_CONCURRENCY' }];
const WORK = { planner: planning, 'tool-gateway': tools, worker: [...planning, ...tools] };
const AUTOSCALED = Object.keys(WORK) as (keyof typeof WORK)[];

describe('autoscaling', () => {
  it('scales the planner, the gateway and the worker with KEDA on the pending messages of their own JetStream consumers', () => {
    for (const service of AUTOSCALED) {
      const scaled = get<IScaledObject>(prod, 'ScaledObject', service);
      expect(scaled.spec.scaleTargetRef.name).toBe(service);
      get<K8sObject>(prod, 'Deployment', service);
      const triggers = scaled.spec.triggers.map((t): Record<string, string> => ({
        ...(t.metadata as Record<string, string>),
        type: t.type,
      }));
      expect(triggers.map((t) => [t.stream, t.consumer])).toEqual(
        WORK[service].map(({ consumer }) => [consumer.stream, consumer.durable]),
      );
      for (const [at, trigger] of triggers.entries()) {
        expect(trigger.type).toBe('nats-jetstream');
        expect(Object.values(STREAMS)).toContain(trigger.stream);
        // KEDA reaches the consumer's leader as <pod>.<endpoint>: the endpoint must be the headless Service.
        expect(trigger.natsServerMonitoringEndpoint).toBe('nats-headless.nats.svc.cluster.local:8222');
        // Scale out when work queues behind full replicas, not while they merely work.
        expect(trigger.lagThreshold).toBe(data(prod, `dura-${service}`)[WORK[service][at]!.concurrency]);
      }
    }
  });

  it('keeps at least two planners, two gateways and two workers (the relay and the timers run in the gateway and the worker)', () => {
    for (const service of AUTOSCALED) {
      expect(get<IScaledObject>(prod, 'ScaledObject', service).spec.minReplicaCount).toBeGreaterThanOrEqual(
        2,
      );
      expect(
        get<IHorizontalPodAutoscaler>(prodHpa, 'HorizontalPodAutoscaler', service).spec?.minReplicas,
      ).toBeGreaterThanOrEqual(2);
    }
  });

  it('leaves the replicas of autoscaled Deployments to the autoscaler, and runs one projector, not scaled', () => {
    for (const service of AUTOSCALED) expect(replicasOf(get(prod, 'Deployment', service))).toBeUndefined();
    expect(replicasOf(get(prod, 'Deployment', 'projector'))).toBe(1);
    expect(prod.some((o) => o.kind === 'ScaledObject' && o.metadata.name === 'projector')).toBe(false);
    for (const service of [...AUTOSCALED, 'projector'])
      expect(replicasOf(get(dev, 'Deployment', service))).toBe(1);
  });

  it('offers CPU HorizontalPodAutoscalers instead of KEDA, never both on one Deployment', () => {
    for (const objects of [prod, prodHpa, dev]) {
      const targets = objects.flatMap((o) => {
        if (o.kind === 'ScaledObject') return [(o as unknown as IScaledObject).spec.scaleTargetRef.name];
        if (o.kind === 'HorizontalPodAutoscaler')
          return [(o as unknown as IHorizontalPodAutoscaler).spec?.scaleTargetRef.name];
        return [];
      });
      expect(new Set(targets).size).toBe(targets.length);
      for (const name of targets) get(objects, 'Deployment', name ?? '');
    }
    const hpa = get<IHorizontalPodAutoscaler>(prodHpa, 'HorizontalPodAutoscaler', 'tool-gateway');
    expect(hpa.spec?.metrics?.[0]?.resource).toMatchObject({ name: 'cpu', target: { type: 'Utilization' } });
    expect(prodHpa.some((o) => o.kind === 'ScaledObject')).toBe(false);
  });
});

interface NatsValues {
  config: {
    cluster: { enabled: boolean; replicas?: number };
    jetstream: Record<string, unknown>;
    monitor: Record<string, unknown>;
  };
}

describe('durability', () => {
  const nats = readYaml('deploy/nats/values.yaml') as NatsValues;
  const natsDev = readYaml('deploy/nats/values-dev.yaml') as NatsValues;

  it('runs production NATS as 3 servers with JetStream on file storage, fsync on every write (sync_interval: always)', () => {
    expect(nats.config.cluster).toMatchObject({ enabled: true, replicas: 3 });
    expect(nats.config.jetstream).toMatchObject({
      enabled: true,
      fileStore: { enabled: true, pvc: { enabled: true } },
      memoryStore: { enabled: false },
      merge: { sync_interval: 'always' },
    });
    expect(nats.config.monitor).toMatchObject({ enabled: true, port: 8222 });
  });

  it('creates every stream R3 in production, within the servers NATS has; R1 on the single dev server', () => {
    const replicas = Number(data(prod, 'dura-common').DURA_STREAM_REPLICAS);
    expect(replicas).toBe(3);
    expect(replicas).toBeLessThanOrEqual(nats.config.cluster.replicas ?? 1);
    expect(natsDev.config.cluster.enabled).toBe(false);
    expect(data(dev, 'dura-common').DURA_STREAM_REPLICAS).toBe('1');
  });

  it('points every service at the NATS release the values files install (over TLS in production)', () => {
    expect(data(dev, 'dura-common').NATS_URL).toBe('nats://nats.nats.svc.cluster.local:4222');
    expect(data(prod, 'dura-common').NATS_URL).toBe('tls://nats.nats.svc.cluster.local:4222');
  });
});

interface CollectorConfig {
  exporters: Record<string, { endpoint: string }>;
  service: { pipelines: { traces: { exporters: string[] } } };
}

describe('telemetry', () => {
  it('sends spans to the collector Service, which exports them to the Jaeger the dev overlay runs', () => {
    const endpoint = new URL(data(prod, 'dura-common').OTEL_EXPORTER_OTLP_ENDPOINT ?? '');
    expect(servicePorts(prod, endpoint.hostname)).toContain(Number(endpoint.port));
    const [config] = parseYamlDocuments(
      data(prod, 'otel-collector')['config.yaml'] ?? '',
      'otel-collector',
    ) as CollectorConfig[];
    expect(config?.service.pipelines.traces.exporters).toEqual(['otlp/jaeger']);
    const [host, port] = (config?.exporters['otlp/jaeger']?.endpoint ?? '').split(':');
    expect(servicePorts(dev, host ?? '')).toContain(Number(port));
  });
});
