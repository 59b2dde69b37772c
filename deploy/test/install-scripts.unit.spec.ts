// `npm install` on a fresh machine runs a dependency's install script only where package.json's
// `allowScripts` says yes (npm 12 blocks the rest; npm 11 warns). The Node the project runs on arrives
// through the `node` package's preinstall, so a dependency left unreviewed is a README whose first command
// breaks on a newer npm. Every dependency with an install script gets an explicit entry here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@dura/testing';

interface LockEntry {
  name?: string;
  hasInstallScript?: boolean;
  link?: boolean;
}

const root = repoRoot();
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

/** The installed name of a lockfile entry: its `name`, or the last `node_modules/` segment of its path. */
function nameOf(path: string, entry: LockEntry): string {
  return entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

const withScripts = [
  ...new Set(
    Object.entries(lock.packages)
      .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript === true)
      .map(([path, entry]) => nameOf(path, entry)),
  ),
].sort();

describe('install scripts of dependencies', () => {
  const allow = manifest.allowScripts ?? {};

  it('the lockfile has dependencies with install scripts, among them the Node the project runs on', () => {
    expect(withScripts).toContain('node');
  });

  it('each one is explicitly allowed or denied in package.json', () => {
    const unreviewed = withScripts.filter((name) => typeof allow[name] !== 'boolean');
    expect(unreviewed, 'run `npm install-scripts ls`, then approve or deny each by name').toEqual([]);
  });

  it('the Node binary and the build tools may run theirs', () => {
    for (const name of ['node', 'esbuild', 'nx']) expect(allow[name], name).toBe(true);
  });

  it('names no package the lockfile does not hold', () => {
    const stale = Object.keys(allow).filter((name) => !withScripts.includes(name));
    expect(stale, 'an entry for a package that left the lockfile: remove it').toEqual([]);
  });
});
