import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { repoRoot } from '@dura/testing';
import { HELP, parseBenchOptions } from './options';
import { runBench } from './run-bench';
import { formatTable } from './table';

async function main(): Promise<number> {
  const options = parseBenchOptions(process.argv.slice(2));
  if (options === 'help') {
    console.log(HELP);
    return 0;
  }
  console.error(`dura bench: ${options.scenarios.join(', ')}`);
  const report = await runBench(options);
  const stamp = report.startedAt.replaceAll(':', '-').replace(/\.\d+Z$/, 'Z');
  const out = resolve(options.out ?? `${repoRoot()}/bench-results/bench-${stamp}.json`);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(formatTable(report));
  console.log(`results: ${out}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('dura bench failed:', err);
    process.exit(1);
  },
);
