// The directories an image of one service runs from, derived from the package manifests: the service's workspace
// package, every @dura/* package it depends on in production (transitively), and deploy/image (the migration entry
// points of the pods' init step). The image's build (deploy/image/Dockerfile) copies exactly these, so a package a
// service starts to depend on is in its image without anyone editing a copy list. The services it knows are those
// the Dockerfile has a `service-<name>` stage for.
//   node deploy/image/service-sources.mjs <service>            prints them, one a line
//   node deploy/image/service-sources.mjs <service> <out-dir>  copies them from the repository into out-dir
// Plain Node (no tsx, no installed modules): it runs in the build before anything is installed.
/* global process, URL */
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Workspace directories (relative to the root) by package name, from the root manifest's `workspaces`. */
function workspaces() {
  const patterns = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces;
  const dirs = patterns.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(ROOT, pattern.slice(0, -2))).map((name) => `${pattern.slice(0, -2)}/${name}`)
      : [pattern],
  );
  const byName = new Map();
  for (const dir of dirs) {
    const manifest = join(ROOT, dir, 'package.json');
    if (existsSync(manifest)) byName.set(JSON.parse(readFileSync(manifest, 'utf8')).name, dir);
  }
  return byName;
}

/** The services the image is built for: those the Dockerfile has a `service-<name>` stage for. */
function imageServices() {
  const dockerfile = readFileSync(join(ROOT, 'deploy/image/Dockerfile'), 'utf8');
  return [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+service-(\S+)\s*$/gim)].map((m) => m[1]);
}

/** The directories an image of `service` runs from; throws naming the services there are when it is none. */
export function serviceSources(service) {
  const byName = workspaces();
  const services = imageServices();
  if (!services.includes(service) || byName.get(`@dura/${service}`) !== `services/${service}`)
    throw new Error(
      `"${service}" is none of the services the image is built for: build with --build-arg SERVICE=<name>, ` +
        `one of ${services.join(', ')} (the service-<name> stages of deploy/image/Dockerfile)`,
    );
  const found = new Set();
  const visit = (name) => {
    const at = byName.get(name);
    if (at === undefined || found.has(at)) return;
    found.add(at);
    const { dependencies = {} } = JSON.parse(readFileSync(join(ROOT, at, 'package.json'), 'utf8'));
    for (const dependency of Object.keys(dependencies)) visit(dependency);
  };
  visit(`@dura/${service}`);
  return [...found, 'deploy/image'];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [service = '', out] = process.argv.slice(2);
  try {
    const dirs = serviceSources(service);
    for (const dir of dirs)
      if (out !== undefined) cpSync(join(ROOT, dir), join(out, dir), { recursive: true });
    process.stdout.write(`${dirs.join('\n')}\n`);
  } catch (err) {
    process.stderr.write(`service-sources: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
}
