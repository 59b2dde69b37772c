/*
 * The OpenAPI document of the HTTP API. Over 300 lines with a reason: below the small builders it is a
 * declarative table, one entry per route, read in route order (components: `openapi-components.ts`).
 */
import { fileURLToPath } from 'node:url';
import { RUN_LIST_DEFAULT_LIMIT, RUN_LIST_MAX_LIMIT, RUN_LIST_SORTS, RUN_STATUSES } from '@dura/contracts';
import { CONSOLE_LIST_PARAMETERS, META_PARAMETER, consolePaths } from './openapi-console';
import { triggerPaths } from './openapi-triggers';
import { componentSchemas, type ComponentName } from './openapi-components';
import { chatPaths } from './openapi-chat';
import { EVENTS_MAX_LIMIT } from './query-params';

/** Where `npm run openapi` writes the document; a test checks the committed file equals `openApiDocument()`. */
export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: ComponentName, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});
const error = (description: string) => json('Error', description);

type Param = { name: string; in: 'query' | 'path' | 'header'; description: string; schema: object } & {
  required?: boolean;
  explode?: boolean;
};
const path = (name: string, description: string, schema: object = { type: 'string' }): Param => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
const runId = path('id', 'The run id.');
const seqSchema = { type: 'integer', minimum: 1 };
const repeated = (name: string, description: string, items: object): Param => ({
  name,
  in: 'query',
  description,
  schema: { type: 'array', items },
  explode: true,
});

const get = (summary: string, parameters: Param[], responses: Record<string, object>) => ({
  get: { summary, parameters, responses },
});
/** A path that takes no credential (probes and tooling). */
const publicGet = (summary: string, responses: Record<string, object>) => ({
  get: { summary, parameters: [], responses, security: [] },
});
const post = (summary: string, body: ComponentName, responses: Record<string, object>) => ({
  post: {
    summary,
    parameters: [runId],
    requestBody: { required: body === 'SignalBody', content: { 'application/json': { schema: ref(body) } } },
    responses: {
      ...responses,
      '202': json(
        'SignalAccepted',
        'Published to the signal intake (`duplicate`: this signalId was sent before).',
      ),
      '400': error('The body or the run id is invalid.'),
      '404': error('No such run: its log holds no event (for a tenant-scoped caller: none of its tenant).'),
      '409': error('The run ended (completed, failed, cancelled or rejected): `run_ended`, nothing is sent.'),
    },
  },
});

const submitRuns = {
  post: {
    summary:
      'Submits a run (the request of `dura.submit`) for the caller’s tenant. Scope `submit`. Idempotent on the key: the `Idempotency-Key` header or `runId`, which names a run id in the tenant’s namespace (docs/security/tenants.md).',
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        description:
          'The key (letters, digits, `_`, `-`; not starting with `sch-`, `trg-` or `deb-`): the run id for tenant `default`, the tenant’s prefix and the key for any other tenant. The same key with the same body answers the same run. Not with `debounce` (the window names the run).',
        schema: { type: 'string', maxLength: 128 },
      },
    ],
    requestBody: { required: true, content: { 'application/json': { schema: ref('SubmitBody') } } },
    responses: {
      '200': json(
        'SubmitAccepted',
        '`outcome: skipped`: nothing started, because a run of the `dedupe` key is in flight (`runId`, `reason`).',
      ),
      '202': json(
        'SubmitAccepted',
        '`outcome: started`: published to the run intake (`duplicate`: this run id was submitted before with this body). `outcome: debounced`: held in the `debounce` key’s window; `runId` starts at `fireAt` with the last request of the key (docs/triggers.md).',
      ),
      '400': error(
        'The body is not a valid run request, or the key is not a valid run id or is reserved (`reserved_run_id`), or `debounce` and `dedupe` name different keys, or `debounce` comes with a key, or a debounced request holds a secret the planner cannot seal (e.g. `secrets_key_missing`).',
      ),
      '403': error('The credential lacks scope `submit`, or names a tenant other than its own.'),
      '409': error('The run id was submitted before with a different body (`run_id_conflict`).'),
      '413': error('The body is larger than a message may be (1 MiB).'),
      '503': error(
        'With `debounce`: no planner answered within 5 s to seal the request and keep it in its window (`gate_unanswered`); nothing was kept. Retry after `Retry-After` seconds once a planner runs, or send it without `debounce`.',
      ),
    },
  },
};

const scheduleId = path('id', 'The schedule id.');
const scheduleAction = (summary: string) => ({
  post: {
    summary: `${summary} Scope \`schedule\`.`,
    parameters: [scheduleId],
    responses: { '200': json('Schedule', 'The schedule.'), '404': error('No such schedule.') },
  },
});

/** The OpenAPI 3.1 document of the read API, generated from the zod schemas in @dura/contracts. */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dura projector read API',
      version: '1.0.0',
      description:
        'Runs as the projector folds them from the log. Errors are `{ "error": { "code", "message" } }` with 400, 404, 409 or 500. ' +
        'With credentials configured, every path but /healthz and /openapi.json needs `Authorization: Bearer <token>` ' +
        '(401 without a valid one, 403 without the scope: `read` for GET, `signal` or `cancel` for POST), and a ' +
        'tenant-scoped caller sees only its tenant’s runs (another tenant’s run is 404).',
    },
    security: [{ bearer: [] }],
    paths: {
      '/runs': {
        ...submitRuns,
        ...get(
          'One page of runs, filtered and sorted, with keyset pagination.',
          [
            repeated('status', 'Run statuses, repeated or comma-separated: any may match.', {
              enum: [...RUN_STATUSES],
            }),
            repeated('tag', 'Tags, repeated: the run must carry every one.', {
              type: 'string',
              maxLength: 64,
            }),
            repeated('tool', 'Tools, repeated: the run must have requested a call of every one.', {
              type: 'string',
            }),
            {
              name: 'createdAfter',
              in: 'query',
              description: 'Runs created at or after this time (ISO 8601 date, or date-time with a zone).',
              schema: { type: 'string' },
            },
            {
              name: 'createdBefore',
              in: 'query',
              description: 'Runs created before this time (ISO 8601 date, or date-time with a zone).',
              schema: { type: 'string' },
            },
            {
              name: 'sort',
              in: 'query',
              description: 'Order of the list; runs tie-break on their id.',
              schema: { enum: [...RUN_LIST_SORTS], default: 'updated_desc' },
            },
            {
              name: 'limit',
              in: 'query',
              description: 'Runs per page.',
              schema: {
                type: 'integer',
                minimum: 1,
                maximum: RUN_LIST_MAX_LIMIT,
                default: RUN_LIST_DEFAULT_LIMIT,
              },
            },
            {
              name: 'cursor',
              in: 'query',
              description: '`nextCursor` of the previous page, unchanged, with the same sort.',
              schema: { type: 'string' },
            },
            ...CONSOLE_LIST_PARAMETERS,
            META_PARAMETER,
          ],
          { '200': json('RunList', 'A page of runs.'), '400': error('A query parameter is invalid.') },
        ),
      },
      '/runs/{id}': get(
        'The run’s state: the fold of its log.',
        [
          runId,
          {
            name: 'calls',
            in: 'query',
            description:
              '`all`: the full state. `none`: the state without its `calls` (a `RunStateSummary`; a long run’s calls are most of its state), for a reader that shows the run before it needs its calls.',
            schema: { type: 'string', enum: ['all', 'none'], default: 'all' },
          },
        ],
        {
          '200': {
            description: 'The folded state (`calls=none`: without its calls).',
            content: {
              'application/json': { schema: { anyOf: [ref('RunState'), ref('RunStateSummary')] } },
            },
          },
          '400': error('`calls` is neither `all` nor `none`.'),
          '404': error('No such run in the projection.'),
        },
      ),
      '/runs/{id}/events': get(
        'The run’s events in log order, one page at a time.',
        [
          {
            name: 'fromSeq',
            in: 'query',
            description: 'First stream sequence.',
            schema: { type: 'integer', minimum: 0 },
          },
          {
            name: 'limit',
            in: 'query',
            description: `Events per page (above ${EVENTS_MAX_LIMIT} counts as ${EVENTS_MAX_LIMIT}).`,
            schema: { type: 'integer', minimum: 1, default: 100 },
          },
        ],
        { '200': json('EventPage', 'A page of events.'), '400': error('A query parameter is invalid.') },
      ),
      '/runs/{id}/state': get(
        'Time travel: the fold of the run’s events with seq <= at.',
        [{ name: 'at', in: 'query', required: true, description: 'A stream sequence.', schema: seqSchema }],
        {
          '200': json('StateAt', 'The state after the run’s last event at or before `at`.'),
          '400': error('`at` is missing or not a positive integer.'),
          '404': error('No such run, or it has no event at or before `at`.'),
        },
      ),
      '/runs/{id}/events/{seq}/causes': get(
        'The causation chain of an event: it, its cause (meta.causationId), and so on to the root.',
        [runId, path('seq', 'The event’s stream sequence.', seqSchema)],
        {
          '200': json('Causes', 'The chain, the asked event first.'),
          '400': error('`seq` is not a positive integer.'),
          '404': error('No such run, or no event of it at `seq`.'),
        },
      ),
      '/runs/{id}/stream': get(
        'Server-Sent Events: the run’s events from a sequence on, history then live, without gap or duplicate.',
        [
          runId,
          {
            name: 'fromSeq',
            in: 'query',
            description: 'First stream sequence (default 1).',
            schema: seqSchema,
          },
          {
            name: 'Last-Event-ID',
            in: 'header',
            description: 'Resume after this seq (the `id` of the last message received); wins over fromSeq.',
            schema: { type: 'integer', minimum: 0 },
          },
        ],
        {
          '200': {
            description:
              'Each message is `id: <seq>`, `event: <event type>`, `data: <RunEvent JSON>`; a `: keepalive` comment ' +
              'every 15 s; after the terminal event (run_completed, run_failed, run_cancelled, run_rejected) an ' +
              '`event: end` message whose data is a StreamEnd, then the server closes.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '400': error('`fromSeq` or Last-Event-ID is invalid, or the id is not a run id.'),
          '404': error('The run’s log holds no event.'),
          '429': error(
            'Too many live streams open: for this credential (`too_many_streams`, PROJECTOR_SSE_MAX_PER_TOKEN) or in total (`streams_exhausted`, PROJECTOR_SSE_MAX_TOTAL); retry after `Retry-After` seconds.',
          ),
        },
      ),
      '/openapi.json': publicGet('This document.', {
        '200': {
          description: 'OpenAPI 3.1',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      }),
      '/healthz': publicGet('Liveness, and the stream sequence the projection has reached.', {
        '200': json('Health', 'Up.'),
      }),
      '/runs/{id}/signals': post(
        'Sends a named signal to the run (approve, reject, raise_budget, or any name a wait listens for). Scope `signal`; a signal named `cancel` needs `cancel`.',
        'SignalBody',
        {},
      ),
      '/runs/{id}/cancel': post('Asks the planner to cancel the run. Scope `cancel`.', 'CancelBody', {}),
      '/schedules': {
        ...get('The schedules of the caller’s tenant (every tenant’s for an operator). Scope `read`.', [], {
          '200': json('ScheduleList', 'The schedules, each with its recent ticks and next ticks.'),
        }),
        post: {
          summary:
            'Creates a schedule for the caller’s tenant (an operator names one). Scope `schedule`. The same definition again is a no-op.',
          parameters: [],
          requestBody: { required: true, content: { 'application/json': { schema: ref('ScheduleBody') } } },
          responses: {
            '201': json('Schedule', 'Created.'),
            '200': json('Schedule', 'It existed with this definition.'),
            '400': error('Not a valid schedule (`invalid_schedule`: cron, time zone, request, policies).'),
            '403': error('The credential lacks scope `schedule`, or names another tenant.'),
            '409': error('A schedule with this id exists with another definition.'),
          },
        },
      },
      '/schedules/{id}': {
        ...get(
          'The schedule, its past ticks (`history`) and its next ticks (`next`). Scope `read`.',
          [scheduleId],
          {
            '200': json('Schedule', 'The schedule.'),
            '404': error('No such schedule (for a tenant-scoped caller: none of its tenant).'),
          },
        ),
        delete: {
          summary: 'Deletes the schedule; runs it started are not touched. Scope `schedule`.',
          parameters: [scheduleId],
          responses: { '200': { description: 'Deleted.' }, '404': error('No such schedule.') },
        },
      },
      '/schedules/{id}/pause': scheduleAction('Pauses the schedule: no tick starts a run until resumed.'),
      '/schedules/{id}/resume': scheduleAction(
        'Resumes the schedule from its next tick; ticks while paused never run.',
      ),
      '/schedules/{id}/trigger': {
        post: {
          summary:
            'Starts one run of the schedule now (a planner publishes it). Scope `schedule`. Idempotent on `key`.',
          parameters: [scheduleId],
          requestBody: { required: false, content: { 'application/json': { schema: ref('TriggerBody') } } },
          responses: {
            '202': { description: 'Decided: `{ runId, links }`; a planner starts it.' },
            '404': error('No such schedule.'),
          },
        },
      },
      '/projection-errors': get(
        'Stream messages the projection could not apply, newest first (100 per page).',
        [{ name: 'beforeSeq', in: 'query', description: 'Only messages below this seq.', schema: seqSchema }],
        { '200': json('ProjectionErrors', 'A page of errors.') },
      ),
      ...triggerPaths(),
      '/agents': get(
        'The agents the caller’s tenant may start (every agent for an operator), each with its versions, kind and input JSON Schema, as the running planners announce them. Scope `read`.',
        [],
        { '200': json('AgentList', 'The agents, by name; versions oldest first.') },
      ),
      '/tools': get('The tools the running gateways run, with safety class and limits. Scope `read`.', [], {
        '200': json('ToolList', 'The tools, by name.'),
      }),
      '/flow/limits': get(
        'Model limits and concurrency keys (docs/flow-control.md): for each, what it limits, the figures the planners declare, the share of each rate available now, slots in use, callers waiting (by tenant) and a 429 throttle in force, with warnings when replicas declare different figures. A tenant’s caller sees the shared limits and its own, and only its own callers waiting. Scope `read`.',
        [],
        { '200': json('FlowLimits', 'The limits, model limits first.') },
      ),
      ...consolePaths(),
      ...chatPaths(),
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token from PROJECTOR_API_TOKENS_FILE, or an OIDC JWT of the configured issuer.',
        },
      },
    },
  };
}
