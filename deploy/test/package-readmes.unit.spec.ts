// A package's README lists its public entry points: each subpath of its package.json `exports` (as the specifier
// an importer writes, with the file it resolves to) and each command of its `bin`, in a section `## Entry points`.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRepoFile, ROOT } from './repo';

interface Manifest {
  name: string;
  exports?: Record<string, string | { import?: string; default?: string }>;
  bin?: Record<string, string>;
}

const PACKAGES = ['libs', 'services'].flatMap((floor) =>
  readdirSync(join(ROOT, floor))
    .map((name) => `${floor}/${name}`)
    .filter((dir) => existsSync(join(ROOT, dir, 'package.json'))),
);

/** What the README must name: `specifier` (`file`) for each export, `command` (`file`) for each bin. */
function entryPoints(dir: string): string[] {
  const manifest = JSON.parse(readRepoFile(dir, 'package.json')) as Manifest;
  const file = (target: string | { import?: string; default?: string }) =>
    (typeof target === 'string' ? target : (target.import ?? target.default ?? '')).replace(/^\.\//, '');
  const exports = Object.entries(manifest.exports ?? {})
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => `\`${manifest.name}${subpath.slice(1)}\` (\`${file(target)}\`)`);
  const bins = Object.entries(manifest.bin ?? {}).map(
    ([command, target]) => `\`${command}\` (\`${file(target)}\``,
  );
  return [...exports, ...bins];
}

describe.each(PACKAGES)('%s/README.md', (dir) => {
  it('lists the entry points of its package.json (exports and bin) under "## Entry points"', () => {
    expect(existsSync(join(ROOT, dir, 'README.md')), 'the package has a README').toBe(true);
    const readme = readRepoFile(dir, 'README.md');
    const section = /^## Entry points\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1];
    expect(section, 'a section "## Entry points"').toBeDefined();
    const missing = entryPoints(dir).filter((entry) => !section!.includes(entry));
    expect(missing, 'entry points to add to the section, as `specifier` (`file`)').toEqual([]);
    if (entryPoints(dir).length === 0) expect(section).toMatch(/None/);
  });
});
