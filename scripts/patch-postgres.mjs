#!/usr/bin/env node
// Patches postgres.js 3.4.x (porsager/postgres#1066, #1208; fix proposed in PR #1209): a write scheduled on a
// connection whose server just died throws from a setImmediate callback ("Cannot read properties of null
// (reading 'write')") and kills the whole process. Dura's services must survive a Postgres restart, so the
// scheduled write fails the query with CONNECTION_CLOSED instead. Idempotent; run by `postinstall`.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const MARK = '/* dura: guarded nextWrite */';
let root;
try {
  // The package's exports hide package.json, so walk up from its entry point.
  root = dirname(createRequire(import.meta.url).resolve('postgres'));
  while (
    !existsSync(join(root, 'package.json')) ||
    !readFileSync(join(root, 'package.json'), 'utf8').includes('"name": "postgres"')
  ) {
    if (dirname(root) === root) throw new Error('postgres package root not found');
    root = dirname(root);
  }
} catch {
  console.log('patch-postgres: postgres is not installed; nothing to patch');
  process.exit(0);
}
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;

for (const file of ['src/connection.js', 'cjs/src/connection.js']) {
  const path = join(root, file);
  if (!existsSync(path)) continue;
  let text = readFileSync(path, 'utf8');
  if (text.includes(MARK)) continue;
  const replacements = [
    [
      '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
      `  function nextWrite(fn) {\n    ${MARK}\n    if (!socket) {\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
    ],
    [
      '    clearImmediate(nextWriteTimer)\n    if (socket) {',
      '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    if (socket) {',
    ],
    [
      '    incomings = null\n    clearImmediate(nextWriteTimer)\n',
      '    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n',
    ],
  ];
  for (const [from, to] of replacements) {
    if (!text.includes(from)) {
      console.error(
        `patch-postgres: postgres ${version} ${file} does not have the expected code; not patched`,
      );
      process.exit(0);
    }
    text = text.replace(from, to);
  }
  writeFileSync(path, text);
  console.log(`patch-postgres: patched postgres ${version} ${file}`);
}
