import { afterAll, beforeAll } from 'vitest';
import { startFakeLlmServer, type FakeLlmServer, type StartFakeLlmServerOptions } from './fake-llm-server';

/**
 * Registers beforeAll/afterAll: a fake model provider for the spec file (call it before anything that needs
 * its URL when it starts, such as useCrashSystem), closed after the file whether or not the tests passed.
 */
export function useFakeLlmServer(options: StartFakeLlmServerOptions): () => FakeLlmServer {
  let server: FakeLlmServer | undefined;
  beforeAll(async () => {
    server = await startFakeLlmServer(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error('useFakeLlmServer(): only available inside tests, after beforeAll');
    return server;
  };
}
