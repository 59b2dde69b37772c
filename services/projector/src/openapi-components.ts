/* The schemas of the OpenAPI document's components, from the zod schemas the API validates with. */
import * as z from 'zod';
import {
  ApiErrorSchema,
  CausesResponseSchema,
  EventPageResponseSchema,
  JsonObjectSchema,
  JsonValueSchema,
  RunEventSchema,
  RunListResponseSchema,
  RunStateSchema,
  RunStateSummarySchema,
  RunSummarySchema,
  StateAtResponseSchema,
  StreamEndSchema,
  ConsoleSessionSchema,
  ForkAcceptedSchema,
  ForkBodySchema,
  ScheduleListSchema,
  ScheduleViewSchema,
  AgentListSchema,
  ToolListSchema,
  FlowLimitsResponseSchema,
} from '@dura/contracts';
import { TRIGGER_COMPONENTS } from './openapi-triggers';
import { CancelBodySchema, SignalAcceptedSchema, SignalBodySchema } from './signal-routes';
import { SubmitAcceptedSchema, SubmitBodySchema } from './submit-route';
import { ScheduleBodySchema, TriggerBodySchema } from './schedule-routes';

const HealthSchema = z.object({ ok: z.boolean(), position: z.number().int().nonnegative() });
const ProjectionErrorsSchema = z.object({
  errors: z.array(
    z.object({
      seq: z.number().int(),
      runId: z.string().nullable(),
      code: z.string(),
      message: z.string(),
      at: z.string(),
    }),
  ),
});

/** Components, by name; every response body is one of them. */
export const COMPONENTS = {
  RunSummary: RunSummarySchema,
  RunList: RunListResponseSchema,
  RunEvent: RunEventSchema,
  EventPage: EventPageResponseSchema,
  RunState: RunStateSchema,
  RunStateSummary: RunStateSummarySchema,
  StateAt: StateAtResponseSchema,
  Causes: CausesResponseSchema,
  StreamEnd: StreamEndSchema,
  Error: ApiErrorSchema,
  Health: HealthSchema,
  ProjectionErrors: ProjectionErrorsSchema,
  JsonValue: JsonValueSchema,
  JsonObject: JsonObjectSchema,
  SignalBody: SignalBodySchema,
  CancelBody: CancelBodySchema,
  SignalAccepted: SignalAcceptedSchema,
  ConsoleSession: ConsoleSessionSchema,
  ForkBody: ForkBodySchema,
  ForkAccepted: ForkAcceptedSchema,
  SubmitBody: SubmitBodySchema,
  SubmitAccepted: SubmitAcceptedSchema,
  ScheduleBody: ScheduleBodySchema,
  Schedule: ScheduleViewSchema,
  ScheduleList: ScheduleListSchema,
  TriggerBody: TriggerBodySchema,
  ...TRIGGER_COMPONENTS,
  AgentList: AgentListSchema,
  ToolList: ToolListSchema,
  FlowLimits: FlowLimitsResponseSchema,
} satisfies Record<string, z.ZodType>;
export type ComponentName = keyof typeof COMPONENTS;

export function componentSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    // Input shape: objects stay open to fields a later release adds, as the API's clients should be.
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
  );
}
