/**
 * A session transcript in markdown (```console blocks): `$ command` lines, each followed by the output it
 * should print. The first-hour e2e test replays docs/first-hour.md with these helpers, so the page cannot
 * drift from what the product prints.
 */
export interface TranscriptStep {
  command: string;
  /**
   * Expected output lines. A line ending in its only "…" (the CLI cut it there, or it goes on) is compared up
   * to the "…"; a line with "…" elsewhere is elided text and not compared.
   */
  expected: string[];
  /** From a `[exit N]` line; default 0. */
  exitCode: number;
}

/** The steps of every ```console block of `markdown`, in order. */
export function parseTranscript(markdown: string): TranscriptStep[] {
  const steps: TranscriptStep[] = [];
  const blocks = markdown.matchAll(/^```console\n([\s\S]*?)^```$/gm);
  for (const block of blocks) {
    for (const line of (block[1] ?? '').split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2).trim(), expected: [], exitCode: 0 });
      else {
        const step = steps.at(-1);
        const exit = /^\[exit (\d+)\]$/.exec(line.trim());
        if (!step) continue;
        if (exit) step.exitCode = Number(exit[1]);
        else if (line.trim() === '') continue;
        else if (!line.includes('…')) step.expected.push(line);
        else if (line.trimEnd().indexOf('…') === line.trimEnd().length - 1)
          step.expected.push(line.trimEnd().slice(0, -1));
      }
    }
  }
  return steps;
}

/**
 * A line with what changes from session to session made uniform: hex ids become `H`, numbers `N` (ports,
 * seqs, times, durations), runs of spaces one space (table columns widen with their content).
 */
export function normalizeLine(line: string): string {
  return line
    .replace(/[0-9a-f]{8,}/g, 'H')
    .replace(/\d+/g, 'N')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The expected lines no line of `output` contains (after normalizing both). */
export function missingLines(expected: readonly string[], output: string): string[] {
  const actual = output.split('\n').map(normalizeLine);
  return expected.filter((line) => {
    const want = normalizeLine(line);
    return !actual.some((have) => have.includes(want));
  });
}

/** Splits a command line as a POSIX shell would for the quoting the transcript uses ('…' and "…"). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+)/g;
  let current: string | undefined;
  let lastEnd = -1;
  for (const match of command.matchAll(pattern)) {
    const piece = match[1] ?? (match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]) ?? '';
    // Pieces with no space between them are one word: --payload='{"a":1}'.
    if (current !== undefined && match.index === lastEnd) current += piece;
    else {
      if (current !== undefined) words.push(current);
      current = piece;
    }
    lastEnd = match.index + match[0].length;
  }
  if (current !== undefined) words.push(current);
  return words;
}
