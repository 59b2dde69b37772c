// Keeps the tail of a child's combined output: enough to explain a failure, bounded so a chatty
// service cannot grow the test process without limit.

const MAX_CHARS = 200 * 1024;

export interface OutputLog {
  append(chunk: string): void;
  text(): string;
  tail(chars?: number): string;
  /** Calls `listener` after every append; returns an unsubscribe function. */
  onAppend(listener: () => void): () => void;
}

/** Mirrors a child's lines to our stderr as `[name] line`, so DURA_TEST_VERBOSE=1 shows services live. */
function createEcho(name: string): (chunk: string) => void {
  let partial = '';
  return (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) process.stderr.write(`[${name}] ${line}\n`);
  };
}

export function createOutputLog(name: string): OutputLog {
  let buffer = '';
  const listeners = new Set<() => void>();
  const echo = process.env['DURA_TEST_VERBOSE'] === '1' ? createEcho(name) : undefined;
  return {
    append(chunk) {
      buffer += chunk;
      if (buffer.length > MAX_CHARS) buffer = buffer.slice(-MAX_CHARS);
      echo?.(chunk);
      for (const listener of listeners) listener();
    },
    text: () => buffer,
    tail: (chars = 4_000) => buffer.slice(-chars),
    onAppend(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
