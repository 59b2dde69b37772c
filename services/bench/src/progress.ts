/** Progress lines go to stderr so stdout holds only the table. */
export function progress(line: string): void {
  process.stderr.write(`  … ${line}\n`);
}

/** A callback that reports every `every`-th count (and the last). */
export function countReporter(label: string, total: number, every = Math.max(1, Math.ceil(total / 10))) {
  return (n: number) => {
    if (n % every === 0 || n === total) progress(`${label}: ${n}/${total}`);
  };
}
