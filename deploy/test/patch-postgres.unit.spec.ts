import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@dura/testing';

const run = promisify(execFile);
const SCRIPT = join(repoRoot(), 'scripts/patch-postgres.mjs');
const MARK = '/* dura: guarded nextWrite */';
const TYPES_MARK = '/* dura: caught fetchArrayTypes */';
const CLOSED_MARK = '/* dura: close fails sent queries */';

/** The code postgres.js 3.4.x has where the guard goes, as the script expects it. */
const UPSTREAM = [
  'function Connection(options) {',
  '  function nextWrite(fn) {',
  '    const x = socket.write(chunk, fn)',
  '    nextWriteTimer !== null && clearImmediate(nextWriteTimer)',
  '    chunk = nextWriteTimer = null',
  '    return x',
  '  }',
  '  function terminate() {',
  '    clearImmediate(nextWriteTimer)',
  '    if (socket) {',
  '      socket.destroy()',
  '    }',
  '  }',
  '  function closed() {',
  '    incomings = null',
  '    clearImmediate(nextWriteTimer)',
  '    if (initial)',
  '      return reconnect()',
  '',
  "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))",
  '  }',
  '  function ReadyForQuery(x) {',
  '      if (needsTypes) {',
  '        return fetchArrayTypes()',
  '      }',
  '  }',
  '}',
  '',
].join('\n');

/** The code as the first version of the script left it: the nextWrite guard only. */
const GUARDED_ONLY = UPSTREAM.replace(
  '  function nextWrite(fn) {\n',
  `  function nextWrite(fn) {\n    ${MARK}\n`,
);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dura-patch-pg-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function patch(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, file]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function copyOf(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

describe('scripts/patch-postgres.mjs', () => {
  it('is a no-op, exit 0, on the installed (already patched) connection.js', async () => {
    const installed = join(dirname(createRequire(SCRIPT).resolve('postgres')), 'connection.js');
    const text = await readFile(installed, 'utf8');
    expect(text).toContain(MARK);
    expect(text).toContain(TYPES_MARK);
    expect(text).toContain(CLOSED_MARK);
    const file = await copyOf('installed.js', text);
    const result = await patch(file);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/already patched/);
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('patches the upstream code once, and leaves it alone the second time', async () => {
    const file = await copyOf('upstream.js', UPSTREAM);
    expect(await patch(file)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/patched .*upstream\.js/),
    });
    const patched = await readFile(file, 'utf8');
    expect(patched).toContain(`${MARK}\n    if (!socket) {`);
    expect(patched.match(/chunk = nextWriteTimer = null/g)).toHaveLength(4);
    // The array types read of a new connection has a handler.
    expect(patched).toContain(`${TYPES_MARK}\n        return fetchArrayTypes().catch(noop)\n`);
    // A close, with an error or not, fails the queries still in `sent`; the leading `;` keeps the line from
    // being read as a call of the `return reconnect()` above it.
    expect(patched).toContain(
      `      return reconnect()\n\n    ${CLOSED_MARK}\n    ;(hadError ? sent.length : (query || sent.length)) && error(`,
    );
    expect(await patch(file)).toMatchObject({ code: 0, stdout: expect.stringMatching(/already patched/) });
    expect(await readFile(file, 'utf8')).toBe(patched);
  });

  it('adds the patches an install patched by an earlier version lacks, and only those', async () => {
    const file = await copyOf('guarded-only.js', GUARDED_ONLY);
    expect(await patch(file)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /patched .*guarded-only\.js \(\/\* dura: caught fetchArrayTypes \*\/, \/\* dura: close fails sent queries \*\/\)/,
      ),
    });
    const patched = await readFile(file, 'utf8');
    expect(patched.match(/dura: guarded nextWrite/g)).toHaveLength(1);
    expect(patched).toContain('return fetchArrayTypes().catch(noop)');
    expect(await patch(file)).toMatchObject({ code: 0, stdout: expect.stringMatching(/already patched/) });
  });

  it('fails with exit 1, saying what changed and what to do, and writes nothing, when upstream code changed', async () => {
    const changed = UPSTREAM.replace(
      'const x = socket.write(chunk, fn)',
      'const x = this.socket.write(chunk, fn)',
    );
    const file = await copyOf('changed.js', changed);
    const result = await patch(file);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /cannot patch .*changed\.js: upstream changed the code the guard goes into/,
    );
    expect(result.stderr).toContain('    |   function nextWrite(fn) {');
    expect(result.stderr).toMatch(
      /What to do: check whether this postgres release fixes porsager\/postgres#1208/,
    );
    expect(result.stderr).toMatch(
      /update its replacements in scripts\/patch-postgres\.mjs .* or pin postgres/,
    );
    expect(await readFile(file, 'utf8')).toBe(changed);
  });
});
