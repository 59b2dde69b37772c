import type { JsonObject, PayloadRef } from '@dura/contracts';

/** Reads offloaded values (tool results over the size threshold) and stores large ones. */
export interface PayloadAccess {
  resolveText(ref: PayloadRef): Promise<string>;
  /** Stores `args` when their JSON is over the threshold; undefined when they stay inline. */
  offloadArgs?(args: JsonObject): Promise<PayloadRef | undefined>;
}
