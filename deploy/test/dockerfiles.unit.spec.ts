import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DockerfileParser, type ModifiableInstruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { readRepoFile, ROOT, SERVICE_NAMES, SERVICES } from './repo';

interface Step {
  keyword: string;
  args: string;
  /** Index of the stage (FROM) it belongs to. */
  stage: number;
  /** Names of its flags, e.g. `from` for `COPY --from=deps`. */
  flags: string[];
}

function stepsOf(dockerfile: string): Step[] {
  let stage = -1;
  return DockerfileParser.parse(dockerfile)
    .getInstructions()
    .map((instruction) => {
      const keyword = instruction.getKeyword().toUpperCase();
      if (keyword === 'FROM') stage += 1;
      const flags =
        'getFlags' in instruction
          ? (instruction as ModifiableInstruction).getFlags().map((f) => f.getName())
          : [];
      return { keyword, args: (instruction.getArgumentsContent() ?? '').replace(/\\\n/g, ' '), stage, flags };
    });
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

/** The workspace directories a package needs at run time: itself and its production @dura/* dependencies. */
function runtimeWorkspaces(name: string, seen = new Set<string>()): Set<string> {
  const dir = workspaces.get(name);
  if (!dir || seen.has(dir)) return seen;
  seen.add(dir);
  const pkg = JSON.parse(readRepoFile(dir, 'package.json')) as PackageJson;
  for (const dependency of Object.keys(pkg.dependencies ?? {})) runtimeWorkspaces(dependency, seen);
  return seen;
}

describe.each(SERVICE_NAMES)('services/%s/Dockerfile', (service) => {
  const steps = stepsOf(readRepoFile('services', service, 'Dockerfile'));
  const last = Math.max(...steps.map((s) => s.stage));
  const final = steps.filter((s) => s.stage === last);
  const one = (keyword: string) => final.filter((s) => s.keyword === keyword);

  it('builds in stages and installs only production dependencies of this service and tsx, from the lockfile', () => {
    expect(last).toBeGreaterThanOrEqual(2);
    const install = steps.find((s) => /\bnpm ci\b/.test(s.args))!;
    expect(install.stage).toBeLessThan(last);
    expect(install.args).toContain('--omit=dev');
    expect(install.args).toContain(`--workspace=@dura/${service}`);
    expect(install.args).toContain('--workspace=@dura/deploy');
    expect(install.args).toContain('node scripts/patch-postgres.mjs');
    // tsx runs the TypeScript sources: a production dependency of @dura/deploy, so --omit=dev keeps it.
    const deploy = JSON.parse(readRepoFile('deploy/package.json')) as PackageJson;
    expect(deploy.dependencies).toHaveProperty('tsx');
  });

  it('builds and runs on Node 24 LTS in every stage, with the npm that comes with it', () => {
    const [arg] = steps.filter((s) => s.keyword === 'ARG' && s.args.startsWith('NODE_IMAGE='));
    expect(arg?.args).toBe('NODE_IMAGE=node:24-alpine');
    const froms = steps.filter((s) => s.keyword === 'FROM');
    expect(froms.length).toBe(last + 1);
    for (const from of froms) expect(from.args.split(/\s+/)[0]).toBe('${NODE_IMAGE}');
    // Node 20's npm could not read the lockfile, so the images once installed another; Node 24's reads it.
    expect(steps.some((s) => /npm install --global npm/.test(s.args))).toBe(false);
  });

  it('listens on every interface inside the container (DURA_BIND_HOST=0.0.0.0), where a published port reaches it', () => {
    const env = one('ENV')
      .map((s) => s.args)
      .join(' ');
    expect(env).toMatch(/(^|\s)DURA_BIND_HOST=0\.0\.0\.0(\s|$)/);
  });

  it('runs as a non-root user given by number', () => {
    const [user] = one('USER');
    expect(user?.args).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
  });

  it('starts the service entry point through tsx and checks its /healthz on the port its config reads', () => {
    const [cmd] = one('CMD');
    const entry = `services/${service}/src/main.ts`;
    expect(JSON.parse(cmd!.args)).toEqual(['node', '--import', 'tsx', entry]);
    expect(existsSync(join(ROOT, entry))).toBe(true);
    const portVar = SERVICES[service].healthPortVar;
    const [healthcheck] = one('HEALTHCHECK');
    expect(healthcheck!.args).toContain(`process.env.${portVar}`);
    expect(healthcheck!.args).toContain("'/healthz'");
    const env = one('ENV')
      .map((s) => s.args)
      .join(' ');
    const port = new RegExp(`${portVar}=(\\d+)`).exec(env)?.[1];
    expect(port, `ENV ${portVar}`).toBeDefined();
    expect(one('EXPOSE').map((s) => s.args)).toContain(port);
  });

  it('copies every workspace package the service needs at run time, from paths the build context keeps', () => {
    const copies = one('COPY').filter((s) => !s.flags.includes('from'));
    const sources = copies.map((s) => s.args.split(/\s+/)[0]!.replace(/\/$/, ''));
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(ignoredBy(dockerignore, source), `${source} is in .dockerignore`).toBe(false);
    }
    for (const dir of runtimeWorkspaces(`@dura/${service}`)) expect(sources).toContain(dir);
    expect(sources.includes('deploy/image')).toBe(SERVICES[service].usesDatabase);
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
    ])
      expect(ignoredBy(dockerignore, path), path).toBe(false);
  });
});
