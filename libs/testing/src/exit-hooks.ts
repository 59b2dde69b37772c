// Last-resort cleanup: a test that throws, or a worker that exits without running afterAll, must not leave
// a nats-server or a temp dir behind. Only synchronous work can run inside process.on('exit').

type ExitHook = () => void;

const hooks = new Set<ExitHook>();
let installed = false;

function runHooks(): void {
  for (const hook of hooks) {
    try {
      hook();
    } catch {
      // One failing hook must not stop the others from cleaning up.
    }
  }
  hooks.clear();
}

/** Runs `hook` synchronously when this process exits; the returned function unregisters it. */
export function onProcessExit(hook: ExitHook): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', runHooks);
  }
  hooks.add(hook);
  return () => {
    hooks.delete(hook);
  };
}
