import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RunEvent } from '@dura/contracts';
import { DuraApiError, type DuraApi } from './dura-api';

const MAX_EVENTS = 5_000;

/** Every run event, paging through the API. */
export async function allEvents(api: DuraApi, runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let fromSeq = 0;
  while (events.length < MAX_EVENTS) {
    const page = await api.events(runId, fromSeq, 500);
    events.push(...page.events);
    if (page.nextFromSeq === undefined || page.events.length === 0) break;
    fromSeq = page.nextFromSeq;
  }
  return events;
}

/** A refusal of the API as the MCP error a resource request answers (404: invalid params, naming the run). */
export async function readOrThrow<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof DuraApiError)
      throw new McpError(
        err.status === 404 ? ErrorCode.InvalidParams : ErrorCode.InternalError,
        `${err.code}: ${err.message}`,
      );
    throw err;
  }
}

/** `dura://runs/{runId}` (the run's state) and `dura://runs/{runId}/events` (its log), read with the caller's token. */
export function registerRunResources(server: McpServer, api: DuraApi): void {
  server.registerResource(
    'run',
    new ResourceTemplate('dura://runs/{runId}', { list: undefined }),
    { title: 'Run state', description: "The fold of a run's log", mimeType: 'application/json' },
    async (uri, variables) => {
      const state = await readOrThrow(() => api.getRun(String(variables.runId)));
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(state) }] };
    },
  );
  server.registerResource(
    'run-events',
    new ResourceTemplate('dura://runs/{runId}/events', { list: undefined }),
    { title: 'Run events', description: "A run's log, oldest first", mimeType: 'application/json' },
    async (uri, variables) => {
      const events = await readOrThrow(() => allEvents(api, String(variables.runId)));
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(events) }] };
    },
  );
}
