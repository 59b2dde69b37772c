// Loaded with --import before a bundled service (service-bundle.ts): a bundled process that tries to load a
// TypeScript file would import a second copy of the libraries its bundle holds, so it fails at once instead.
/* global process, URL */
import { registerHooks } from 'node:module';

if (typeof registerHooks === 'function') {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (/\.(c|m)?tsx?$/.test(new URL(resolved.url).pathname)) {
        throw new Error(
          `this service runs from a bundle and cannot load TypeScript (${resolved.url}); ` +
            'start it through tsx: name the .ts file in a DURA_* variable of its env, or set DURA_TEST_BUNDLES=0',
        );
      }
      return resolved;
    },
  });
} else {
  process.emitWarning(
    'bundle-guard: module.registerHooks is missing (Node < 22.15): TypeScript loads unguarded',
  );
}
