export { createPayloadStore, sha256Hex } from './payload-store';
export type { PayloadStore, PayloadStoreOptions } from './payload-store';
export { createPayloadResolver } from './payload-resolver';
export type { PayloadResolver, PayloadResolverOptions } from './payload-resolver';
export {
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  checkPayloadRef,
  encodeJsonPayload,
  isPayloadRef,
  offloadIfLarge,
  parsePayloadUri,
} from './payload-ref';
export type { Offloaded } from './payload-ref';
export { PayloadCorrupt, PayloadMissing, PayloadRefInvalid, PayloadUnavailable } from './errors';
