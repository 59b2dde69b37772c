import type { RunEvent } from '@dura/contracts';
import type { Output } from './command';

export interface Streams {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processStreams: Streams = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/**
 * Output helpers over stdout/stderr; under `--json` only JSON reaches stdout. `formatEvent` renders an event as
 * a readable line (the SDK's, passed in by execute.ts so that help and usage errors never load the SDK); without
 * it an event prints as its JSON line.
 */
export function createOutput(
  json: boolean,
  streams: Streams = processStreams,
  formatEvent?: (event: RunEvent) => string,
): Output {
  const out: Output = {
    line: (text = '') => streams.stdout(`${text}\n`),
    write: (text) => (json ? undefined : streams.stdout(text)),
    json: (value) => streams.stdout(`${JSON.stringify(value, null, 2)}\n`),
    jsonLine: (value) => streams.stdout(`${JSON.stringify(value)}\n`),
    table: (columns, rows) => {
      for (const line of renderTable(columns, rows)) streams.stdout(`${line}\n`);
    },
    event: (event) => (json || !formatEvent ? out.jsonLine(event) : out.line(formatEvent(event))),
    // Under --json the output is for programs: hints stay out of it (errors still go to stderr).
    note: (text) => (json ? undefined : streams.stderr(`${text}\n`)),
    error: (text) => streams.stderr(`dura: ${text}\n`),
  };
  return out;
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function renderTable(columns: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const all = [columns, ...rows];
  const widths = columns.map((_, i) => Math.max(...all.map((row) => [...(row[i] ?? '')].length)));
  return all.map((row) =>
    columns
      .map((_, i) => {
        const cell = row[i] ?? '';
        return i === columns.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length);
      })
      .join('  ')
      .trimEnd(),
  );
}
