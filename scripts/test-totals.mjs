#!/usr/bin/env node
// Sums vitest's per-project "Tests  N failed | M passed (T)" lines from a log into one closing line.
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
let passed = 0;
let failed = 0;
let skipped = 0;
let runs = 0;
for (const line of text.split('\n')) {
  const match = /^\S*:?\s*Tests\s+(.+)\(\d+\)\s*$/.exec(line.trim());
  if (!match) continue;
  runs += 1;
  for (const [, count, kind] of match[1].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
    if (kind === 'passed') passed += Number(count);
    else if (kind === 'failed') failed += Number(count);
    else skipped += Number(count);
  }
}
console.log(`\n${runs} vitest runs`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
if (runs === 0) {
  console.error('no vitest run was found in the log: nothing was tested');
  process.exit(1);
}
