import type { NewEvent } from '@dura/contracts';

/** An event to record, before its envelope: its type and data. */
export type EventDraft = {
  [K in NewEvent['type']]: { type: K; data: Extract<NewEvent, { type: K }>['data'] };
}[NewEvent['type']];
