// The OpenAPI paths of the routes the web console adds (console-routes.ts, console-static.ts).
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (name: string, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});
const runId = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The run id.',
  schema: { type: 'string' },
};
const notFound = json('Error', 'No such run (for a tenant-scoped caller: none of its tenant).');

/** Query parameters of `GET /runs` the console's filters use. */
export const CONSOLE_LIST_PARAMETERS = (
  [
    ['agent', 'Runs of this registered agent (by name).'],
    ['agentVersion', 'Runs pinned to this version of their agent.'],
    ['tenant', 'Runs of this tenant; a tenant-scoped caller asking for another tenant gets no runs.'],
    ['idPrefix', 'Runs whose id starts with this text.'],
  ] as const
).map(([name, description]) => ({
  name,
  in: 'query' as const,
  description,
  schema: { type: 'string', maxLength: 64 },
}));

export const META_PARAMETER = {
  name: 'meta',
  in: 'query' as const,
  description: '`key:value`, repeated: the run’s metadata must hold every pair.',
  schema: { type: 'array', items: { type: 'string' } },
  explode: true,
};

/** The console's paths, merged into the API document. */
export function consolePaths(): Record<string, unknown> {
  return {
    '/console/session': {
      get: {
        summary: 'Who the presented credential is: name, tenant, scopes, and the tracing UI link template.',
        parameters: [],
        responses: {
          '200': json('ConsoleSession', 'The session.'),
          '401': json('Error', 'No valid credential.'),
        },
      },
    },
    '/runs/{id}/tokens': {
      get: {
        summary:
          'Server-Sent Events: the model’s answer for the run as it streams (core NATS dura.run.<id>.live).',
        parameters: [runId],
        responses: {
          '200': {
            description:
              'Each message is `event: token`, `data: {"runId", "decision", "delta"}`; deltas are ephemeral (not in the log), so a reconnecting client may miss some; the `thought` event holds the whole answer.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '404': notFound,
          '429': json('Error', 'Too many live streams open for this credential or in total.'),
        },
      },
    },
    '/runs/{id}/fork': {
      post: {
        summary:
          'Forks the run at a stream sequence: a new run whose log starts as this one’s up to `atSeq` (scope `submit`: the fork runs its calls again). A chosen `runId` is in the tenant’s namespace (docs/security/tenants.md). With `edit`, the fork carries an edited input (a fork at the run’s first event) and/or an edited tool result (of a completed call no later decision used); the fork records it as the caller’s edit, with the original value’s sha256.',
        parameters: [runId],
        requestBody: { required: true, content: { 'application/json': { schema: ref('ForkBody') } } },
        responses: {
          '202': json('ForkAccepted', 'Published on dura.fork (`duplicate`: this run id was forked before).'),
          '400': json(
            'Error',
            'The body is invalid (`bad_body`), or the edit cannot be made on the run as projected (`fork_edit_invalid`, and the other fork refusals).',
          ),
          '404': notFound,
        },
      },
    },
    '/ui/': {
      get: {
        summary: 'The web console (static files; `/` redirects here). Its calls present the user’s token.',
        parameters: [],
        security: [],
        responses: {
          '200': { description: 'The console.', content: { 'text/html': { schema: { type: 'string' } } } },
        },
      },
    },
  };
}
