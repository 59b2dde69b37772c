// When the dura bin rebuilds services/cli/dist: a source newer than the build, or gone, or no build at all.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { staleReason } from '../scripts/freshness.mjs';

describe('staleReason', () => {
  let root: string;
  let paths: { output: string; buildInfo: string; root: string };
  const built = Date.parse('2026-01-01T00:00:00Z');

  /** A build record started at `built` from the given inputs, each written `ageMs` before or after it. */
  function given(record: unknown, inputs: Record<string, number>): void {
    writeFileSync(paths.output, '// built\n');
    writeFileSync(paths.buildInfo, typeof record === 'string' ? record : JSON.stringify(record));
    for (const [name, offsetMs] of Object.entries(inputs)) {
      writeFileSync(join(root, name), 'export {};\n');
      const at = new Date(built + offsetMs);
      utimesSync(join(root, name), at, at);
    }
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dura-cli-fresh-'));
    paths = { output: join(root, 'dura.mjs'), buildInfo: join(root, 'build.json'), root };
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is undefined when every input is older than the build', () => {
    given({ startedAt: built, inputs: ['a.ts', 'b.ts'] }, { 'a.ts': -5_000, 'b.ts': -1 });
    expect(staleReason(paths)).toBeUndefined();
  });

  it('names an input edited after the build started', () => {
    given({ startedAt: built, inputs: ['a.ts', 'b.ts'] }, { 'a.ts': -5_000, 'b.ts': 1_000 });
    expect(staleReason(paths)).toBe('b.ts changed');
  });

  it('names an input that is gone', () => {
    given({ startedAt: built, inputs: ['a.ts', 'gone.ts'] }, { 'a.ts': -5_000 });
    expect(staleReason(paths)).toBe('gone.ts is gone');
  });

  it('wants a build when there is none, or its record is unreadable or malformed', () => {
    expect(staleReason(paths)).toBe('dist/dura.mjs is missing');
    given('{not json', {});
    expect(staleReason(paths)).toBe('dist/build.json is unreadable');
    given({ inputs: [] }, {});
    expect(staleReason(paths)).toBe('dist/build.json is malformed');
  });
});
