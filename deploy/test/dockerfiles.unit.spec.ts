import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DockerfileParser, type ModifiableInstruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { readRepoFile, ROOT, SERVICE_NAMES, SERVICES } from './repo';

const run = promisify(execFile);
const DOCKERFILE = 'deploy/image/Dockerfile';
const SOURCES_SCRIPT = 'deploy/image/service-sources.mjs';

interface Step {
  keyword: string;
  args: string;
  /** Index of the stage (FROM) it belongs to. */
  stage: number;
  /** Its flags by name, e.g. `{ from: 'deps' }` for `COPY --from=deps`. */
  flags: Record<string, string | null>;
}

function stepsOf(dockerfile: string): Step[] {
  let stage = -1;
  return DockerfileParser.parse(dockerfile)
    .getInstructions()
    .map((instruction) => {
      const keyword = instruction.getKeyword().toUpperCase();
      if (keyword === 'FROM') stage += 1;
      const flags = Object.fromEntries(
        'getFlags' in instruction
          ? (instruction as ModifiableInstruction).getFlags().map((f) => [f.getName(), f.getValue()])
          : [],
      );
      return { keyword, args: (instruction.getArgumentsContent() ?? '').replace(/\\\n/g, ' '), stage, flags };
    });
}

const steps = stepsOf(readRepoFile(DOCKERFILE));
const last = Math.max(...steps.map((s) => s.stage));
/** Each stage's base (as written) and name. */
const stages = steps
  .filter((s) => s.keyword === 'FROM')
  .map((s) => {
    const [base = '', as, name] = s.args.split(/\s+/);
    return { base, name: as?.toUpperCase() === 'AS' ? name : undefined };
  });
const stageIndex = (name: string) => stages.findIndex((s) => s.name === name);

/** The steps the image built with SERVICE=`service` is made of: its final stage and the stages below it. */
function imageSteps(service: string): Step[] {
  const chain: number[] = [];
  for (let at = last; at >= 0; at = stageIndex(stages[at]!.base.replace('${SERVICE}', service)))
    chain.unshift(at);
  return steps.filter((s) => chain.includes(s.stage) && s.keyword !== 'FROM');
}

/** Whether .dockerignore keeps `path` out of the build context (Docker's patterns, for the forms used here). */
function ignoredBy(patterns: string[], path: string): boolean {
  const toRegex = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*\//g, '%ANY%')
        .replace(/\*/g, '[^/]*')
        .replace(/%ANY%/g, '(.*/)?')}(/.*)?$`,
    );
  return patterns.some((pattern) => toRegex(pattern).test(path));
}

const dockerignore = readRepoFile('.dockerignore')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
}
const workspaceDirs = [
  'proto',
  'deploy',
  ...['libs', 'services'].flatMap((dir) => readdirSync(join(ROOT, dir)).map((name) => `${dir}/${name}`)),
].filter((dir) => existsSync(join(ROOT, dir, 'package.json')));
const workspaces = new Map(
  workspaceDirs.map((dir) => [(JSON.parse(readRepoFile(dir, 'package.json')) as PackageJson).name, dir]),
);

/** The @dura/* packages the TypeScript files below `dir` import (tests left out, as .dockerignore leaves them). */
function duraImports(dir: string): Set<string> {
  const found = new Set<string>();
  const walk = (at: string) => {
    for (const name of readdirSync(join(ROOT, at))) {
      const path = `${at}/${name}`;
      if (ignoredBy(dockerignore, path)) continue;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (path.endsWith('.ts'))
        for (const m of readFileSync(join(ROOT, path), 'utf8').matchAll(
          /(?:^import [^;]*?from|^export [^;]*?from|import\()\s*'(@dura\/[^'/]+)/gm,
        ))
          found.add(m[1]!);
    }
  };
  walk(dir);
  return found;
}

/** What deploy/image/service-sources.mjs answers for `service`: the directories the image copies. */
async function sourcesOf(service: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, [join(ROOT, SOURCES_SCRIPT), service]);
  return stdout.split('\n').filter((line) => line !== '');
}

describe(DOCKERFILE, () => {
  it('builds in stages and installs only production dependencies of the service named by SERVICE and tsx, from the lockfile', () => {
    // SERVICE has no default: an image is always built for a service someone named.
    expect(steps.filter((s) => s.keyword === 'ARG' && s.stage === -1).map((s) => s.args)).toContain(
      'SERVICE',
    );
    expect(last).toBeGreaterThanOrEqual(2);
    const install = steps.find((s) => /\bnpm ci\b.*--omit=dev/.test(s.args))!;
    expect(install.stage).toBeLessThan(last);
    expect(install.args).toContain('--workspace="@dura/${SERVICE}"');
    expect(install.args).toContain('--workspace=@dura/deploy');
    expect(install.args).toContain('node scripts/patch-postgres.mjs');
    // tsx runs the TypeScript sources: a production dependency of @dura/deploy, so --omit=dev keeps it.
    const deploy = JSON.parse(readRepoFile('deploy/package.json')) as PackageJson;
    expect(deploy.dependencies).toHaveProperty('tsx');
  });

  it('builds and runs on Node 24 LTS in every stage, with the npm that comes with it', () => {
    const [arg] = steps.filter((s) => s.keyword === 'ARG' && s.args.startsWith('NODE_IMAGE='));
    expect(arg?.args).toBe('NODE_IMAGE=node:24-alpine');
    // Every stage starts from that image or from a stage that does.
    stages.forEach(({ base }, at) => {
      if (base === '${NODE_IMAGE}') return;
      const below = base === 'service-${SERVICE}' ? SERVICE_NAMES.map((s) => `service-${s}`) : [base];
      for (const name of below) expect(stageIndex(name), `${name}, the base of stage ${at}`).toBeLessThan(at);
      for (const name of below) expect(stageIndex(name)).toBeGreaterThanOrEqual(0);
    });
    // Node 20's npm could not read the lockfile, so the images once installed another; Node 24's reads it.
    expect(steps.some((s) => /npm install --global npm/.test(s.args))).toBe(false);
  });

  it('has a service-<name> stage for exactly the services the manifests deploy, and builds the image from it', () => {
    const named = stages.flatMap(({ name }) => (name?.startsWith('service-') ? [name.slice(8)] : []));
    expect(named.sort()).toEqual([...SERVICE_NAMES].sort());
    expect(stages[last]!.base).toBe('service-${SERVICE}');
  });

  it('copies the sources service-sources.mjs derives for SERVICE, and nothing else from the context into the image', () => {
    const derive = steps.find((s) => s.args.includes(SOURCES_SCRIPT))!;
    expect(derive.args).toBe(`node ${SOURCES_SCRIPT} "\${SERVICE}" /out`);
    expect(stages[derive.stage]!.name).toBe('sources');
    for (const service of SERVICE_NAMES) {
      const copies = imageSteps(service)
        .filter((s) => s.keyword === 'COPY')
        .map((s) => `--from=${s.flags.from} ${s.args}`);
      // The installed tree, the derived sources and, for the projector, the web console it serves.
      const console = '--from=console /app/services/console/dist/ services/console/dist/';
      expect(copies, service).toEqual([
        '--from=deps /app/ ./',
        '--from=sources /out/ ./',
        ...(service === 'projector' ? [console] : []),
      ]);
    }
  });

  it('refuses, naming the services there are, a SERVICE it has no stage for', async () => {
    for (const service of ['', 'dev', 'gateway']) {
      const failed = await run(process.execPath, [join(ROOT, SOURCES_SCRIPT), service]).then(
        () => undefined,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed?.code, service).toBe(2);
      expect(failed?.stderr).toContain(`"${service}" is none of the services the image is built for`);
      expect(failed?.stderr).toContain(SERVICE_NAMES.join(', '));
    }
  });

  it('copies each directory it derives, whole, into the directory it is given', async () => {
    const out = await mkdtemp(join(tmpdir(), 'dura-image-sources-'));
    try {
      await run(process.execPath, [join(ROOT, SOURCES_SCRIPT), 'projector', out]);
      for (const file of [
        'services/projector/src/main.ts',
        'libs/core/src/index.ts',
        'deploy/image/migrate-projector.ts',
      ])
        expect(existsSync(join(out, file)), file).toBe(true);
      expect(existsSync(join(out, 'services/planner'))).toBe(false);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe.each(SERVICE_NAMES)('the image built with SERVICE=%s', (service) => {
  const image = imageSteps(service);
  const env = image
    .filter((s) => s.keyword === 'ENV')
    .map((s) => s.args)
    .join(' ');
  const one = (keyword: string) => image.filter((s) => s.keyword === keyword);

  it('listens on every interface inside the container (DURA_BIND_HOST=0.0.0.0), where a published port reaches it', () => {
    expect(env).toMatch(/(^|\s)DURA_BIND_HOST=0\.0\.0\.0(\s|$)/);
  });

  it('runs as a non-root user given by number', () => {
    const [user] = one('USER');
    expect(user?.args).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
  });

  it('starts the service entry point through tsx and checks its /healthz on the port its config reads', () => {
    const [cmd] = one('CMD');
    expect(env).toMatch(/(^|\s)DURA_SERVICE=\$\{SERVICE\}(\s|$)/);
    expect(JSON.parse(cmd!.args)).toEqual([
      'sh',
      '-c',
      'exec node --import tsx "services/${DURA_SERVICE}/src/main.ts"',
    ]);
    expect(existsSync(join(ROOT, `services/${service}/src/main.ts`))).toBe(true);
    const portVar = SERVICES[service].healthPortVar;
    const [healthcheck] = one('HEALTHCHECK');
    expect(healthcheck!.args).toContain(
      "(process.env.PROJECTOR_HTTP_PORT ?? process.env.METRICS_PORT) + '/healthz'",
    );
    const port = new RegExp(`${portVar}=(\\d+)`).exec(env)?.[1];
    expect(port, `ENV ${portVar}`).toBeDefined();
    expect(one('EXPOSE').map((s) => s.args)).toEqual([port]);
    // The health check reads PROJECTOR_HTTP_PORT first: only the projector's image may set it.
    expect(env.includes('PROJECTOR_HTTP_PORT=')).toBe(portVar === 'PROJECTOR_HTTP_PORT');
  });

  it('copies every workspace package the service imports or depends on, from paths the build context keeps', async () => {
    const sources = await sourcesOf(service);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(ignoredBy(dockerignore, source), `${source} is in .dockerignore`).toBe(false);
    }
    expect(sources[0]).toBe(`services/${service}`);
    // What the packages in the image import is in the image: the service's sources, its libraries' and the
    // init step's entry (migrate-<service>.ts), each read as the build context has it.
    const imported = new Set(
      sources.filter((dir) => dir !== 'deploy/image').flatMap((dir) => [...duraImports(dir)]),
    );
    const migrate = `deploy/image/migrate-${service}.ts`;
    expect(existsSync(join(ROOT, migrate)), migrate).toBe(SERVICES[service].usesDatabase);
    if (SERVICES[service].usesDatabase)
      for (const m of readRepoFile(migrate).matchAll(/from '(@dura\/[^'/]+)/g)) imported.add(m[1]!);
    for (const name of imported) {
      const dir = workspaces.get(name);
      expect(dir, `${name} is a workspace package`).toBeDefined();
      expect(sources, `${name}, imported in the image of ${service}`).toContain(dir);
    }
  });
});

describe('.dockerignore', () => {
  it('keeps installed modules, tests and the repository history out of the context, and the sources in', () => {
    for (const path of [
      'node_modules',
      'libs/core/node_modules/x',
      '.git',
      'libs/core/test/a.ts',
      'services/planner/src/a.spec.ts',
    ])
      expect(ignoredBy(dockerignore, path), path).toBe(true);
    for (const path of [
      'services/planner/src/main.ts',
      'libs/core/src/index.ts',
      'package-lock.json',
      '.npmrc',
      'scripts/patch-postgres.mjs',
      'services/tool-gateway/migrations/0000_init.sql',
      'deploy/package.json',
      DOCKERFILE,
      SOURCES_SCRIPT,
    ])
      expect(ignoredBy(dockerignore, path), path).toBe(false);
  });
});
