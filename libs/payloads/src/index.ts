export { createPayloadStore, type PayloadStore, type PayloadStoreOptions, sha256Hex } from './payload-store';
export { createPayloadResolver, type PayloadResolver, type PayloadResolverOptions } from './payload-resolver';
export {
  checkPayloadRef,
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  encodeJsonPayload,
  isPayloadRef,
  type Offloaded,
  offloadIfLarge,
  parsePayloadUri,
} from './payload-ref';
export { PayloadCorrupt, PayloadMissing, PayloadRefInvalid, PayloadUnavailable } from './errors';
