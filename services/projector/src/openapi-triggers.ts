// The OpenAPI paths and components of the event trigger and event routes (trigger-routes.ts).
import {
  EventAcceptedSchema,
  EventBodySchema,
  EventTriggerBodySchema,
  EventTriggerListSchema,
  EventTriggerViewSchema,
} from '@dura/contracts';
import { idParam, json, ref } from './openapi-console';

/** Components of these routes, merged into the document's. */
export const TRIGGER_COMPONENTS = {
  EventTriggerBody: EventTriggerBodySchema,
  EventTrigger: EventTriggerViewSchema,
  EventTriggerList: EventTriggerListSchema,
  EventBody: EventBodySchema,
  EventAccepted: EventAcceptedSchema,
};

const error = (description: string) => json('Error', description);
const triggerId = idParam('The trigger id.');
const body = (name: string) => ({ required: true, content: { 'application/json': { schema: ref(name) } } });

/** The paths of event triggers and events, merged into the API document. */
export function triggerPaths(): Record<string, unknown> {
  return {
    '/triggers': {
      get: {
        summary: 'The event triggers of the caller’s tenant (every tenant’s for an operator). Scope `read`.',
        parameters: [],
        responses: { '200': json('EventTriggerList', 'The triggers.') },
      },
      post: {
        summary:
          'Creates an event trigger for the caller’s tenant (an operator names one). Scope `schedule`. Its id and subject are in the tenant’s namespace (docs/triggers.md); the same definition again is a no-op.',
        parameters: [],
        requestBody: body('EventTriggerBody'),
        responses: {
          '201': json('EventTrigger', 'Created.'),
          '200': json('EventTrigger', 'It existed with this definition.'),
          '400': error(
            'Not a valid trigger (`bad_body`, `bad_subject`: a wildcard first token, another tenant’s).',
          ),
          '403': error('The credential lacks scope `schedule`, or names another tenant.'),
          '409': error('A trigger with this id exists with another definition.'),
        },
      },
    },
    '/triggers/{id}': {
      get: {
        summary: 'The event trigger. Scope `read`.',
        parameters: [triggerId],
        responses: {
          '200': json('EventTrigger', 'The trigger.'),
          '404': error('No such trigger (for a tenant-scoped caller: none of its tenant).'),
        },
      },
      delete: {
        summary:
          'Deletes the trigger: no message published after the answer starts a run of it; runs it started are not touched. Scope `schedule`.',
        parameters: [triggerId],
        responses: { '200': { description: 'Deleted.' }, '404': error('No such trigger.') },
      },
    },
    '/events': {
      post: {
        summary:
          'Publishes an event on a subject under `dura.event.` (stream DURA_EVENTS); each event trigger reading the subject starts a run with the payload as input. Scope `submit`. A tenant’s subject and id are in its namespace (docs/triggers.md).',
        parameters: [],
        requestBody: body('EventBody'),
        responses: {
          '202': json(
            'EventAccepted',
            'Published (`duplicate`: this id was published within the duplicate window).',
          ),
          '400': error('Not a valid event: the subject (`bad_subject`), the id or the payload.'),
          '403': error('The credential lacks scope `submit`.'),
          '413': error('The body is larger than a message may be (1 MiB).'),
        },
      },
    },
  };
}
