// docs/architecture.md draws which file owns what: every file it names must be where it says. A path with a folder
// is read from the repository root; a bare file name in a section is read from the folder of the first path the
// section names (`### Inside the tool gateway` names `services/tool-gateway/src/gateway.ts` first).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRepoFile, ROOT } from './repo';

const FILE = /`([\w./-]+\.(?:ts|mjs|md|yaml|json)|[\w./-]*Dockerfile)`/g;

/** The page's sections (split at `##` and `###` headings), each with the file names it puts in backticks. */
function sections(page: string): { heading: string; names: string[] }[] {
  return page
    .split(/^(?=#{2,3} )/m)
    .map((text) => ({ heading: text.split('\n')[0]!, names: [...text.matchAll(FILE)].map((m) => m[1]!) }));
}

describe('docs/architecture.md', () => {
  const page = readRepoFile('docs/architecture.md');

  it.each(sections(page).filter(({ names }) => names.length > 0))(
    '$heading: every file it names exists',
    ({ names }) => {
      const folder = names.find((name) => name.includes('/'))?.replace(/\/[^/]*$/, '');
      const missing = names.filter((name) => {
        const path = name.includes('/') ? name : join(folder ?? '', name);
        return !existsSync(join(ROOT, path)) && !existsSync(join(ROOT, 'docs', name));
      });
      expect(missing).toEqual([]);
    },
  );

  it('names the parts of the run driver and the gateway, the worker, the one start-up and the fold', () => {
    for (const heading of [
      '### Inside the planner: the run driver',
      '### Inside the tool gateway',
      '### The worker',
      '### One start-up',
      '### The fold',
      '## Who owns the HTTP command door',
    ])
      expect(page).toContain(`\n${heading}\n`);
  });
});
