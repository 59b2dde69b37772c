// The OpenAPI paths of the routes the web console adds (console-routes.ts, console-static.ts).
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (name: string, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});
/** The `id` path parameter of a route, described. */
export const idParam = (description: string) => ({
  name: 'id',
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});
const runId = idParam('The run id.');
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
          'Server-Sent Events: the text of the run’s model calls as it streams (stream DURA_TOKENS, kept 15 minutes), resumed from `Last-Event-ID` with no gap and no repeat (docs/streaming.md).',
        parameters: [
          runId,
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            description:
              'The id of the last event received (`<tokens seq>-<log seq>`); without it, from the start.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': {
            description:
              'Events: `token` `{"runId", "decision", "call", "attempt", "n", "delta"}`; `discard` `{"runId", "decision", "call", "attempt", "reason"}` (drop that attempt’s text: it was asked again or never recorded); `gap` `{…, "attempt", "from", "to"}` (text lost or expired); `final` `{"runId", "decision", "call", "text"}` (the recorded answer: show it instead); `end` `{"status"}`, then the stream closes.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '400': json('Error', 'Last-Event-ID is not an id this stream sent.'),
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
