import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { NO_VERDICT_WAIT, verdictFor } from '@dura/client';
import { verdictWaits } from '@dura/core';
import { DuraError, JsonValueSchema, RUN_STATUSES, type JsonValue } from '@dura/contracts';
import { DuraApiError, type DuraApi, type RunState } from './dura-api';
import { registerRunResources } from './run-resources';
import { serveRunSubscriptions } from './run-subscriptions';
import { waitForRun } from './wait-run';

const RunIdArg = z.string().min(1).max(128).describe('The run id.');
const CallIdArg = z
  .string()
  .min(1)
  .optional()
  .describe(
    'The call whose approval (or ctx.approve wait) to answer when several wait (default: the oldest).',
  );

/** A run as a tool answers it: what a client acts on, without the whole fold (read `dura://runs/{id}`). */
export function runView(state: RunState) {
  return {
    runId: state.runId,
    status: state.status,
    agent: state.request?.agent.kind === 'agent' ? state.request.agent.name : null,
    tenant: state.tenant,
    steps: state.steps,
    lastSeq: state.lastSeq,
    waiting: state.waiting,
    approvals: verdictWaits(state.waits).map((wait) => wait.callId ?? null),
    ...(state.output === undefined ? {} : { output: state.output }),
    ...(state.error === undefined ? {} : { error: state.error }),
  };
}

const answer = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
  structuredContent: JSON.parse(JSON.stringify(value)) as Record<string, unknown>,
});

/**
 * A refusal of the API (401, 403, 404, ...), or a verdict for a run that waits for none, as a tool error the
 * client reads; anything else propagates.
 */
async function guarded(work: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return answer(await work());
  } catch (err) {
    if (err instanceof DuraError && err.code === NO_VERDICT_WAIT)
      return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.message}` }] };
    if (!(err instanceof DuraApiError)) throw err;
    const status = err.status === 0 ? '' : ` (HTTP ${err.status})`;
    return { isError: true, content: [{ type: 'text', text: `${err.code}${status}: ${err.message}` }] };
  }
}

/**
 * The Dura MCP server for one caller: tools to start, read, list, wait for, approve, reject, signal and
 * cancel runs, and resources for a run's state and events (which a client may subscribe to), each a call of the projector's API with the
 * caller's token (its scopes and tenant decide what succeeds).
 */
export function createDuraMcpServer(api: DuraApi, version: string): McpServer {
  const server = new McpServer(
    { name: 'dura', version },
    { capabilities: { logging: {}, resources: { subscribe: true } } },
  );

  server.registerTool(
    'start_run',
    {
      title: 'Start a run',
      description:
        'Starts a run of an agent the deployment serves. Idempotent on runId. Needs scope `submit`.',
      inputSchema: {
        agent: z.string().min(1).describe('The served agent to run.'),
        version: z.string().optional().describe('Pin a version of the agent (default: its latest).'),
        input: JsonValueSchema.optional().describe("The run's input (text or JSON)."),
        runId: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,128}$/)
          .optional()
          .describe('Choose the run id (default: generated).'),
        tenant: z.string().optional().describe('Only for an operator token: the tenant to run for.'),
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(() => {
        const request: Record<string, JsonValue> = {
          agent: { kind: 'agent', name: args.agent, ...(args.version ? { version: args.version } : {}) },
        };
        if (args.input !== undefined) request.input = args.input;
        if (args.runId !== undefined) request.runId = args.runId;
        if (args.tenant !== undefined) request.tenant = args.tenant;
        return api.submit(request);
      }),
  );

  server.registerTool(
    'get_run',
    {
      title: 'Get a run',
      description:
        "A run's status, what it waits for, its output or error. The full state: resource dura://runs/{runId}.",
      inputSchema: { runId: RunIdArg },
      annotations: { readOnlyHint: true },
    },
    (args) => guarded(async () => runView(await api.getRun(args.runId))),
  );

  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description: 'Runs of your tenant, newest first; filter by status and agent.',
      inputSchema: {
        status: z.array(z.enum(RUN_STATUSES)).optional(),
        agent: z.string().optional(),
        limit: z.number().int().min(1).max(500).optional(),
        cursor: z.string().optional().describe('nextCursor of the previous page.'),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      guarded(() => {
        const query = new URLSearchParams();
        for (const status of args.status ?? []) query.append('status', status);
        if (args.agent) query.set('agent', args.agent);
        query.set('limit', String(args.limit ?? 20));
        if (args.cursor) query.set('cursor', args.cursor);
        return api.listRuns(query);
      }),
  );

  server.registerTool(
    'wait_run',
    {
      title: 'Wait for a run',
      description:
        'Waits until the run ends (or, with until "waiting", also until it waits for an approval, a signal or an operator), sending progress notifications as it advances. Returns the run; timedOut when it did not get there in time.',
      inputSchema: {
        runId: RunIdArg,
        until: z
          .enum(['end', 'waiting'])
          .optional()
          .describe('"end" (default) or "waiting": stop at a wait too.'),
        timeoutSeconds: z.number().int().min(1).max(600).optional().describe('Default 60.'),
      },
      annotations: { readOnlyHint: true },
    },
    (args, extra) =>
      guarded(async () => {
        const token = extra._meta?.progressToken;
        const result = await waitForRun(api, args.runId, {
          until: args.until ?? 'end',
          timeoutMs: (args.timeoutSeconds ?? 60) * 1000,
          signal: extra.signal,
          onProgress: async (state) => {
            if (token === undefined) return;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken: token,
                progress: state.lastSeq,
                message: `${state.status} at seq ${state.lastSeq}`,
              },
            });
          },
        });
        return { ...runView(result.state), timedOut: result.timedOut };
      }),
  );

  // Both answer whichever approval the run waits for (a call awaiting approval, or a code agent's ctx.approve)
  // with the signal that wait listens for; a run that waits for none is refused, naming what it waits for.
  const answerApproval = (approved: boolean, title: string, description: string) =>
    server.registerTool(
      approved ? 'approve' : 'reject',
      {
        title,
        description,
        inputSchema: {
          runId: RunIdArg,
          callId: CallIdArg,
          ...(approved ? {} : { reason: z.string().max(2000).optional() }),
        },
        annotations: { destructiveHint: true, idempotentHint: false },
      },
      (args: { runId: string; callId?: string | undefined; reason?: string | undefined }) =>
        guarded(async () => {
          const state = await api.getRun(args.runId);
          const verdict = verdictFor(state, { approved, reason: args.reason }, { callId: args.callId });
          const sent = await api.signal(args.runId, verdict.name, verdict.payload);
          return { ...sent, name: verdict.name, payload: verdict.payload };
        }),
    );
  answerApproval(
    true,
    'Approve',
    'Approves what the run waits for: a call awaiting approval (it is then run) or a ctx.approve verdict ' +
      '(sent as {"approved": true}). Refused when the run waits for no approval. Needs scopes `read` and `signal`.',
  );
  answerApproval(
    false,
    'Reject',
    'Rejects what the run waits for: a call awaiting approval (the model reads the reason) or a ctx.approve ' +
      'verdict (the code gets {approved: false, reason}). Needs scopes `read` and `signal`.',
  );

  server.registerTool(
    'signal',
    {
      title: 'Signal a run',
      description:
        'Sends a named signal with an optional JSON payload (a run waiting for it resumes). Needs scope `signal`.',
      inputSchema: { runId: RunIdArg, name: z.string().min(1).max(200), payload: JsonValueSchema.optional() },
      annotations: { destructiveHint: true },
    },
    (args) => guarded(() => api.signal(args.runId, args.name, args.payload)),
  );

  server.registerTool(
    'cancel',
    {
      title: 'Cancel a run',
      description: 'Cancels a run; its calls in flight are aborted. Needs scope `cancel`.',
      inputSchema: { runId: RunIdArg, reason: z.string().max(2000).optional() },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    (args) => guarded(() => api.cancel(args.runId, args.reason)),
  );

  registerRunResources(server, api);
  serveRunSubscriptions(server, api);
  return server;
}
