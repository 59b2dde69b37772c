// One source of configuration truth: the services' zod schemas. The reference page is generated from them, and
// every deployment this repository ships sets only variables they declare and every one they require.
import type { IContainer } from 'kubernetes-models/v1/Container';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CONFIG_SCHEMAS,
  configReference,
  presenceOf,
  readmeConfigBlock,
  replaceConfigBlock,
  requiredVariables,
} from '../config-reference';
import type { K8sObject } from './kustomize';
import { containersOf, get, mainContainer } from './pods';
import { kustomize, readRepoFile, SERVICE_NAMES, SERVICES, unknownVariables, type ServiceName } from './repo';

interface EnvSource {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/**
 * The variables `container` is given: its `env` entries (values and ConfigMap/Secret references alike) and the
 * keys of the rendered ConfigMaps and Secrets it takes through `envFrom`. A Secret created outside the manifests
 * contributes no names here: a required variable must be named in the manifests themselves.
 */
function variablesSet(container: IContainer, objects: K8sObject[]): Set<string> {
  const names = new Set<string>();
  for (const from of container.envFrom ?? []) {
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const name = (from.configMapRef ?? from.secretRef)?.name;
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name) as EnvSource | undefined;
    for (const key of Object.keys({ ...found?.data, ...found?.stringData }))
      names.add(`${from.prefix ?? ''}${key}`);
  }
  for (const entry of container.env ?? []) if (entry.valueFrom || entry.value) names.add(entry.name);
  return names;
}

interface Deployment {
  /** Variables set on each container of the service: the main one first. */
  containers: (service: ServiceName) => { name: string; variables: Set<string> }[];
}

function kubernetes(dir: string): Deployment {
  const objects = kustomize.build(dir);
  return {
    containers: (service) => {
      const workload = get<K8sObject>(objects, 'Deployment', service);
      const main = mainContainer(workload);
      return [
        main,
        ...containersOf(workload)
          .map((c) => c.container)
          .filter((c) => c !== main),
      ].map((container) => ({ name: container.name, variables: variablesSet(container, objects) }));
    },
  };
}

function composeFile(): Deployment {
  // Compose applies YAML merge keys (`<<: *dura-env`), so parse the way it does.
  const compose = parse(readRepoFile('docker-compose.yml'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string | number | null> }>;
  };
  return {
    containers: (service) => {
      const environment = compose.services[service]?.environment;
      if (!environment) throw new Error(`docker-compose.yml has no environment for service ${service}`);
      const set = Object.entries(environment).filter(([, value]) => value !== null && value !== '');
      return [{ name: service, variables: new Set(set.map(([name]) => name)) }];
    },
  };
}

const DEPLOYMENTS: Record<string, () => Deployment> = {
  'overlays/prod': () => kubernetes('overlays/prod'),
  'overlays/dev': () => kubernetes('overlays/dev'),
  'docker-compose.yml': composeFile,
};

describe('the configuration reference in docs/configuration.md', () => {
  it('is the table generated from the config schemas', () => {
    const expected = configReference();
    expect(
      readmeConfigBlock(readRepoFile('docs/configuration.md')),
      'docs/configuration.md is out of date with services/*/src/config.ts: run `npm run config:docs`',
    ).toBe(expected);
  });

  it('lists every variable of every schema with its services and default, and marks the required ones', () => {
    const table = configReference();
    for (const service of SERVICE_NAMES) {
      for (const name of Object.keys(SERVICES[service].schema.shape))
        expect(table).toContain(`| \`${name}\``);
    }
    const row = (name: string) => table.split('\n').find((line) => line.startsWith(`| \`${name}\``)) ?? '';
    expect(row('DATABASE_URL')).toMatch(/\| tool-gateway, worker, projector +\| \*\*required\*\* /);
    expect(row('NATS_URL')).toMatch(/\| all +\| `nats:\/\/127\.0\.0\.1:4222` /);
    expect(row('PLANNER_CONCURRENCY')).toMatch(/\| planner, worker +\| 64 +\| planner: .*direct call/);
    expect(row('METRICS_PORT')).toMatch(
      /\| planner, tool-gateway, worker +\| — +\| .*unset: no metrics server/,
    );
    expect(row('OTEL_*')).toContain('Observability');
  });

  it('uses the same schemas as the deploy tests', () => {
    expect(Object.keys(CONFIG_SCHEMAS).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const service of SERVICE_NAMES) expect(CONFIG_SCHEMAS[service]).toBe(SERVICES[service].schema);
  });

  it('names a field without a description, and tells how to fix it', () => {
    const schemas = { svc: z.object({ A_VAR: z.string().describe('an a'), B_VAR: z.string() }) };
    expect(() => configReference(schemas)).toThrow(/B_VAR has no description .* add \.describe/);
  });

  it('shows differing defaults per service', () => {
    const schemas = {
      one: z.object({ X: z.coerce.number().default(1).describe('x') }),
      two: z.object({ X: z.coerce.number().default(2).describe('x') }),
    };
    expect(configReference(schemas)).toMatch(/\| `X` +\| all +\| one: 1; two: 2 +\| x +\|/);
  });

  it('replaces only the marked block, and throws when the markers are missing', () => {
    const readme = 'intro\n<!-- config:start -->\nold\n<!-- config:end -->\noutro\n';
    const updated = replaceConfigBlock(readme, '| t |');
    expect(updated).toBe('intro\n<!-- config:start -->\n\n| t |\n\n<!-- config:end -->\noutro\n');
    expect(readmeConfigBlock(updated)).toBe('| t |');
    expect(() => readmeConfigBlock('no markers')).toThrow(/npm|markers/);
  });
});

describe('presenceOf', () => {
  it('tells required, optional and defaulted fields apart, as loadConfig sees an unset variable', () => {
    expect(presenceOf(z.string())).toEqual({ kind: 'required' });
    expect(presenceOf(z.string().optional())).toEqual({ kind: 'optional' });
    expect(presenceOf(z.coerce.number().default(5).describe('d'))).toEqual({ kind: 'default', value: 5 });
    expect(requiredVariables(SERVICES.planner.schema)).toEqual([]);
    expect(requiredVariables(SERVICES['tool-gateway'].schema)).toEqual(['DATABASE_URL']);
    expect(requiredVariables(SERVICES.worker.schema)).toEqual(['DATABASE_URL']);
    expect(requiredVariables(SERVICES.projector.schema)).toEqual(['DATABASE_URL']);
  });
});

describe.each(Object.keys(DEPLOYMENTS))('%s', (name) => {
  const deployment = DEPLOYMENTS[name]!();

  it('sets on each Dura container only variables of its service schema (or OTEL_*)', () => {
    for (const service of SERVICE_NAMES)
      for (const { name: container, variables } of deployment.containers(service))
        expect(unknownVariables(service, variables), `${service}/${container}`).toEqual([]);
  });

  it('sets every variable a service requires', () => {
    for (const service of SERVICE_NAMES) {
      const [main] = deployment.containers(service);
      const missing = requiredVariables(SERVICES[service].schema).filter((v) => !main!.variables.has(v));
      expect(missing, `${service} cannot start without these`).toEqual([]);
    }
  });
});

describe('variablesSet', () => {
  it('counts env values and references and the keys of envFrom sources, not an unset value', () => {
    const objects = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { A: '1' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { B: 'x' } },
    ];
    const container: IContainer = {
      name: 'x',
      envFrom: [{ configMapRef: { name: 'c' } }, { secretRef: { name: 's' }, prefix: 'P_' }],
      env: [
        { name: 'C', value: 'v' },
        { name: 'D', valueFrom: { secretKeyRef: { name: 'elsewhere', key: 'D' } } },
        { name: 'E', value: '' },
      ],
    };
    expect([...variablesSet(container, objects)].sort()).toEqual(['A', 'C', 'D', 'P_B']);
  });
});
