// The documentation is pages: README.md introduces and links them. Every relative link and anchor in README.md,
// docs/** and the packages' READMEs must resolve, every page under docs/ must be reachable from README.md, and the
// README stays an introduction.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingAnchors, headingSlug, markdownLinks } from './markdown-links';
import { ROOT } from './repo';

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const packageReadmes = ['libs', 'services']
  .flatMap((floor) => readdirSync(join(ROOT, floor)).map((name) => join(floor, name, 'README.md')))
  .concat(['proto/README.md', 'deploy/README.md'])
  .filter((path) => existsSync(join(ROOT, path)));
const PAGES = ['README.md', ...markdownUnder('docs'), ...packageReadmes];
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** `page`'s relative links as repository paths with their anchors (external links and mail left out). */
function localLinks(
  page: string,
): { line: number; target: string; path: string; anchor: string | undefined }[] {
  return markdownLinks(read(page))
    .filter(({ target }) => !/^[a-z][a-z+.-]*:/i.test(target))
    .map(({ line, target }) => {
      const [file = '', anchor] = target.split('#');
      const path = file === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), decodeURI(file)));
      return { line, target, path, anchor };
    });
}

describe('links in README.md, docs/** and the package READMEs', () => {
  it.each(PAGES)(
    '%s: every relative link names a file or folder that exists, and an anchor it has',
    (page) => {
      const broken: string[] = [];
      for (const link of localLinks(page)) {
        const where = `${page}:${link.line} → ${link.target}`;
        if (!existsSync(join(ROOT, link.path))) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (link.anchor === undefined || link.anchor === '') continue;
        if (!link.path.endsWith('.md') || statSync(join(ROOT, link.path)).isDirectory()) continue;
        if (!headingAnchors(read(link.path)).has(link.anchor))
          broken.push(`${where}: ${link.path} has no heading with anchor #${link.anchor}`);
      }
      expect(broken).toEqual([]);
    },
  );

  it('README.md links each page of the documentation, directly', () => {
    const linked = new Set(localLinks('README.md').map(({ path }) => path));
    const pages = [
      'first-hour',
      'getting-started',
      'agents',
      'tools',
      'guarantees',
      'operations',
      'security/README',
      'observability',
      'configuration',
      'reference',
      'architecture',
      'benchmarks',
      'README',
    ].map((name) => `docs/${name}.md`);
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('reaches the pages under docs/ from README.md, following links between pages', () => {
    const reached = new Set<string>(['README.md']);
    const queue = ['README.md'];
    while (queue.length > 0) {
      const page = queue.shift()!;
      for (const { path } of localLinks(page))
        if (
          path.startsWith('docs') &&
          path.endsWith('.md') &&
          !reached.has(path) &&
          existsSync(join(ROOT, path))
        ) {
          reached.add(path);
          queue.push(path);
        }
    }
    // A page added without a link yet is the integrator's to link; a page of this list must stay reachable.
    const known = ['agents-as-code', 'own-repository', 'replay', 'security/bad-input', 'security/api-auth'];
    expect(known.map((name) => `docs/${name}.md`).filter((page) => !reached.has(page))).toEqual([]);
  });
});

describe('README.md', () => {
  const readme = read('README.md');

  it('stays an introduction: at most 250 lines, starting with the two commands', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const commands = [...readme.matchAll(/^```bash\n(.*)\n```$/gm)].map((m) => m[1]);
    expect(commands.slice(0, 2)).toEqual(['npm install && npm run dev', 'npm test']);
  });

  it('links every package README', () => {
    const linked = new Set(localLinks('README.md').map(({ path }) => path));
    expect(packageReadmes.filter((path) => !linked.has(path))).toEqual([]);
  });
});

describe('the link checker itself', () => {
  it('finds inline and reference links outside code, and computes GitHub anchors', () => {
    const page = ['[a](x.md#top) `[not](y.md)`', '```', '[no](z.md)', '```', '[ref]: w.md'].join('\n');
    expect(markdownLinks(page).map((l) => l.target)).toEqual(['x.md#top', 'w.md']);
    expect(headingSlug('What `npm run dev` shows')).toBe('what-npm-run-dev-shows');
    expect(headingSlug('Projector: read model and HTTP API')).toBe('projector-read-model-and-http-api');
    expect([...headingAnchors('# A\n## A\n```\n# B\n```\n### C, d')]).toEqual(['a', 'a-1', 'c-d']);
  });
});
