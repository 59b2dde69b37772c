#!/usr/bin/env node
// Sums vitest's per-project "Tests  N failed | M passed (T)" lines from a log into one closing line, and
// names each failed test with the first lines of its error last, where the end of a long log is read first.
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
let passed = 0;
let failed = 0;
let skipped = 0;
let runs = 0;
const lines = text.split('\n');
/** Each failed test (`FAIL  file > name`, as vitest reports it) with the first lines of what it threw. */
const failures = [];
lines.forEach((line, index) => {
  const failure = /^(?:(\S+): )?\s*FAIL\s+(\S+\.spec\.[cm]?[jt]sx? .*)$/.exec(line);
  if (!failure) return;
  const [, label, test] = failure;
  const said = lines
    .slice(index + 1, index + 40)
    .map((next) => (label && next.startsWith(`${label}: `) ? next.slice(label.length + 2) : next).trim())
    .filter((next) => next !== '' && !/^⎯+/.test(next));
  // The error's message, up to its stack (`❯ file:line`) or the next report.
  const end = said.findIndex((next) => /^(❯|FAIL\b|Tests?\b|Test Files\b|\d+\|)/.test(next));
  said.splice(Math.min(end < 0 ? said.length : end, 3));
  const entry = `${label ? `${label}: ` : ''}${test}\n${said.map((next) => `    ${next.slice(0, 400)}`).join('\n')}`;
  if (!failures.includes(entry)) failures.push(entry);
});
for (const line of lines) {
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
if (failures.length > 0) console.log(`\nfailed:\n${failures.join('\n')}`);
if (runs === 0) {
  console.error('no vitest run was found in the log: nothing was tested');
  process.exit(1);
}
