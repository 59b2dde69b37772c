// scripts/test-totals.mjs closes `npm test`'s log (.ci/run): the sums, and each failed test named with its
// error, last, where a reader of a long log's end finds them.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@dura/testing';

const run = promisify(execFile);
const SCRIPT = join(repoRoot(), 'scripts/test-totals.mjs');
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dura-totals-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function totals(log: string): Promise<{ stdout: string; code: number }> {
  const file = join(dir, `log-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(file, log);
  return run(process.execPath, [SCRIPT, file]).then(
    ({ stdout }) => ({ stdout, code: 0 }),
    (err: { stdout: string; code: number }) => ({ stdout: err.stdout, code: err.code }),
  );
}

const RED = '\x1b[31m';
const RESET = '\x1b[39m';

describe('test-totals', () => {
  it('sums every run and names each failed test with the first lines of its error, stack left out', async () => {
    const log = [
      `@dura/dev: ${RED} FAIL ${RESET} test/flow.e2e.spec.ts > flow control > keeps the provider under its limits`,
      `@dura/dev: ${RED}Error${RESET}: timed out after 60000 ms waiting for 8 calls held`,
      '@dura/dev:  ❯ eventually ../../libs/testing/src/eventually.ts:18:9',
      '@dura/dev:     16|     await new Promise((resolve) => setTimeout(resolve, 50));',
      '@dura/dev:       Tests  1 failed | 270 passed (271)',
      '@dura/planner:  FAIL  test/overlap.int.spec.ts > overlap policies > skip',
      '@dura/planner: TimeoutError: TIMEOUT',
      '@dura/planner:       Tests  1 failed | 122 passed (123)',
      '      Tests  5 passed | 1 skipped (6)',
    ].join('\n');
    const { stdout, code } = await totals(log);
    expect(code).toBe(0);
    expect(stdout).toContain('3 vitest runs\n397 passed, 2 failed, 1 skipped');
    expect(stdout.slice(stdout.indexOf('failed:'))).toBe(
      [
        'failed:',
        '@dura/dev: test/flow.e2e.spec.ts > flow control > keeps the provider under its limits',
        '    Error: timed out after 60000 ms waiting for 8 calls held',
        '@dura/planner: test/overlap.int.spec.ts > overlap policies > skip',
        '    TimeoutError: TIMEOUT',
        '',
      ].join('\n'),
    );
  });

  it('lists nothing when nothing failed, and refuses a log in which no test ran', async () => {
    expect((await totals('      Tests  4 passed (4)\n')).stdout).not.toContain('failed:');
    const empty = await totals('lint: ok\n');
    expect(empty.code).toBe(1);
  });
});
