import { fileURLToPath } from 'node:url';

export {
  createWitnessMcpServer,
  registerExtra,
  SCREENSHOT_PNG,
  type WitnessCall,
  type WitnessServerOptions,
  WitnessState,
} from './testing/witness-mcp-server';
export { startWitnessHttpServer, type WitnessHttpServer } from './testing/witness-http-server';

/** The witness MCP server's stdio entry point (run it with tsx; its one argument is the calls file). */
export const WITNESS_STDIO_ENTRY = fileURLToPath(new URL('./testing/witness-stdio-main.ts', import.meta.url));
