#!/usr/bin/env node
// Patches postgres.js 3.4.x where a Postgres restart would crash the whole process; Dura's services must survive
// one. Each patch is applied once and on its own (its mark says it is there), so an install patched by an
// earlier version of this script gets the patches added since. Idempotent; run by `postinstall`.
// - guarded nextWrite (porsager/postgres#1066, #1208; fix proposed in PR #1209): a write scheduled on a
//   connection whose server just died throws from a setImmediate callback ("Cannot read properties of null
//   (reading 'write')"); the scheduled write fails the query with CONNECTION_CLOSED instead.
// - caught fetchArrayTypes (porsager/postgres#1192, #1205, #1223): every new connection first reads the
//   server's array types, and the promise of that read is dropped. A connection reset or terminated while it
//   reads them (a restart catching the pool as it reconnects) rejects it with no handler: an unhandled
//   rejection (`read ECONNRESET`, or 57P01 "terminating connection due to administrator command") that exits
//   the process. The failure is the connection's, and already reaches the query that opened the connection
//   (with a reset at once; with a termination, when the connection has reconnected for it), so the dropped
//   promise only gets a handler.
// - queries sent on a dying socket failed on close (no upstream issue found): after a socket error the pool
//   still hands queries to the connection until its socket closes (its error already failed those before), and
//   `closed` failed what was left only when the close had no error. A query sent in that gap stayed in the
//   connection's `sent` list; the next connection on that slot took it as the query it was answering and
//   waited for a reply that never comes: the query, and every query after it on that connection, pending for
//   good. The close now fails whatever is still in `sent`, with or without an error.
//
// Fails (exit 1, so `npm ci` fails) when the code to patch is not there: upstream changed it, and shipping
// without the guard would bring the crash back silently.
//
// A single file on purpose: the images copy only it before `npm ci`.
// Usage: node scripts/patch-postgres.mjs [connection.js ...]   (default: the installed postgres package's
// src/connection.js and cjs/src/connection.js)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MARK = '/* dura: guarded nextWrite */';
export const TYPES_MARK = '/* dura: caught fetchArrayTypes */';
export const CLOSED_MARK = '/* dura: close fails sent queries */';

/**
 * The patches, each `{ mark, issue, replacements }`: `replacements` are [upstream code, patched code] pairs,
 * each upstream snippet must occur in the file, and the patched code carries `mark`.
 */
export const PATCHES = [
  {
    mark: MARK,
    issue: 'porsager/postgres#1208 (a write scheduled on a dead socket crashing the process)',
    replacements: [
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
    ],
  },
  {
    mark: TYPES_MARK,
    issue:
      'porsager/postgres#1192 (the array types read of a new connection rejecting with no handler when the connection drops)',
    replacements: [
      [
        '        return fetchArrayTypes()\n',
        `        ${TYPES_MARK}\n        return fetchArrayTypes().catch(noop)\n`,
      ],
    ],
  },
  {
    mark: CLOSED_MARK,
    issue: 'queries sent on a connection between its socket error and its close, left pending for good',
    replacements: [
      [
        "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
        `    ${CLOSED_MARK}\n    ;(hadError ? sent.length : (query || sent.length)) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n`,
      ],
    ],
  },
];

/**
 * `{ status: 'already' }` when `text` carries every patch, `{ status: 'patched', text, applied }` with the
 * missing patches applied (`applied`: their marks), or `{ status: 'changed', missing, issue }` (nothing
 * applied) naming the upstream snippets not found of the first patch that cannot go in.
 */
export function patchConnectionText(text) {
  const wanted = PATCHES.filter((patch) => !text.includes(patch.mark));
  if (wanted.length === 0) return { status: 'already' };
  for (const patch of wanted) {
    const missing = patch.replacements.filter(([from]) => !text.includes(from)).map(([from]) => from);
    if (missing.length > 0) return { status: 'changed', missing, issue: patch.issue };
  }
  let out = text;
  for (const patch of wanted) for (const [from, to] of patch.replacements) out = out.replace(from, to);
  return { status: 'patched', text: out, applied: wanted.map((patch) => patch.mark) };
}

function installedFiles() {
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
    return undefined;
  }
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  return ['src/connection.js', 'cjs/src/connection.js']
    .map((file) => join(root, file))
    .filter((path) => existsSync(path))
    .map((path) => ({ path, label: `postgres ${version} ${path.slice(root.length + 1)}` }));
}

/** Patches `paths` (default: the installed package's files); resolves with the exit code, 1 if any could not be. */
export function main(paths) {
  const files = paths.length > 0 ? paths.map((path) => ({ path, label: path })) : installedFiles();
  if (files === undefined) {
    console.log('patch-postgres: postgres is not installed; nothing to patch');
    return 0;
  }
  let failed = false;
  for (const { path, label } of files) {
    const result = patchConnectionText(readFileSync(path, 'utf8'));
    if (result.status === 'already') {
      console.log(`patch-postgres: ${label} is already patched`);
    } else if (result.status === 'patched') {
      writeFileSync(path, result.text);
      console.log(`patch-postgres: patched ${label} (${result.applied.join(', ')})`);
    } else {
      failed = true;
      console.error(
        `patch-postgres: cannot patch ${label}: upstream changed the code the guard goes into; ` +
          `${result.missing.length} expected snippet(s) not found, the first:\n` +
          result.missing[0].replace(/^/gm, '    | ') +
          `\nWhat to do: check whether this postgres release fixes ${result.issue}; if it does, delete that ` +
          'patch from PATCHES in scripts/patch-postgres.mjs (and the script and its postinstall entry when none ' +
          'is left); if not, update its replacements in scripts/patch-postgres.mjs to the new code, or pin ' +
          'postgres to the last 3.4.x in package.json. Nothing was written to this file.',
      );
    }
  }
  return failed ? 1 : 0;
}

// Run as a script (postinstall, or by hand with file paths); imported, it only exports (for its test).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href)
  process.exit(main(process.argv.slice(2)));
