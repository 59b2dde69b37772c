/**
 * Resolves after every microtask queued so far has run: the code has then either returned, awaited a ctx
 * call, or awaited something else (a timer, a fetch) that replay cannot drive.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof globalThis.setImmediate === 'function') globalThis.setImmediate(resolve);
    else globalThis.setTimeout(resolve, 0);
  });
}
