import * as z from 'zod';
import { RunIdSchema } from './ids';
import { CURRENT_EVENT_VERSIONS, EventDataSchemas, type EventData, type EventType } from './event-data';
import { ContractViolation } from './errors';
import { upcast } from './upcasters';
import { formatIssues } from './format-issues';

export const EventMetaSchema = z.object({
  id: z.string().min(1),
  runId: RunIdSchema,
  ts: z.string().datetime({ offset: true }),
  causationId: z.string().min(1).optional(),
  correlationId: z.string().min(1),
  trace: z.string().optional(),
});
export type EventMeta = z.infer<typeof EventMetaSchema>;

/** The envelope as stored, before its `data` is known to be of the current version. */
export const WireEventSchema = z.object({
  type: z.string().min(1),
  v: z.number().int().positive(),
  data: z.unknown(),
  meta: EventMetaSchema,
});
export type WireEvent = z.infer<typeof WireEventSchema>;

/** An event as every reader sees it: upcast to the current version, with its stream sequence stamped on. */
export type RunEventOf<T extends EventType> = {
  type: T;
  v: number;
  data: EventData<T>;
  meta: EventMeta;
  seq: number;
};
export type RunEvent = { [T in EventType]: RunEventOf<T> }[EventType];

/** An event about to be appended; the store assigns nothing else but the sequence. */
export type NewEvent = { [T in EventType]: Omit<RunEventOf<T>, 'seq'> }[EventType];

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EventDataSchemas, type);
}

/** Builds a current-version event; time and ids arrive as arguments so callers stay deterministic. */
export function newEvent<T extends EventType>(type: T, data: EventData<T>, meta: EventMeta): NewEvent {
  return { type, v: CURRENT_EVENT_VERSIONS[type], data, meta } as NewEvent;
}

/**
 * Decodes a stored event of any known version into the current shape.
 * Throws `ContractViolation` naming what is wrong; never returns a half-valid event.
 */
export function decodeEvent(raw: unknown, seq: number): RunEvent {
  const envelope = WireEventSchema.safeParse(raw);
  if (!envelope.success) {
    throw new ContractViolation(`event at seq ${seq} has a malformed envelope`, formatIssues(envelope.error));
  }
  const { type, v, meta } = envelope.data;
  if (!isEventType(type)) {
    throw new ContractViolation(`event at seq ${seq} has unknown type "${type}"`, [
      `type: unknown event type "${type}"`,
    ]);
  }
  const current = CURRENT_EVENT_VERSIONS[type];
  if (v > current) {
    throw new ContractViolation(
      `event at seq ${seq} (${type}) is version ${v}, newer than this release understands (${current}); upgrade Dura`,
      [`v: ${type} version ${v} is newer than ${current}`],
    );
  }
  const upcasted = upcastAt(seq, type, v, envelope.data.data);
  const data = EventDataSchemas[type].safeParse(upcasted);
  if (!data.success) {
    throw new ContractViolation(
      `event at seq ${seq} (${type} v${v}) has invalid data`,
      formatIssues(data.error),
    );
  }
  return { type, v: current, data: data.data, meta, seq } as RunEvent;
}

/** Upcasts, naming the event's position when an old version's data does not match its old schema. */
function upcastAt(seq: number, type: EventType, v: number, data: unknown): unknown {
  try {
    return upcast(type, v, data);
  } catch (error) {
    if (!(error instanceof ContractViolation)) throw error;
    throw new ContractViolation(`event at seq ${seq} (${type} v${v}): ${error.message}`, error.issues, error);
  }
}
