// The witness MCP server over stdio: `tsx witness-stdio-main.ts <calls-file>`. Each call is appended to the
// file as a JSON line (the test reads its counters there); the `crash` tool kills the process mid-call.
import { appendFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createWitnessMcpServer, WitnessState } from './witness-mcp-server';

const callsFile = process.argv[2];
const server = createWitnessMcpServer(new WitnessState(), {
  onCall: (call) => {
    if (callsFile) appendFileSync(callsFile, `${JSON.stringify(call)}\n`);
  },
  onCrash: () => process.exit(70),
});
await server.connect(new StdioServerTransport());
