/** The protobuf package of this contract version; its files live in the matching folder, `dura/v1/`. */
export const PROTO_PACKAGE = 'dura.v1';

/**
 * Every .proto file of the contract, relative to this package's root (pass the root to protoc as `-I`).
 * The agreement test fails if a file is added to or removed from `dura/v1/` without updating this list.
 */
export const PROTO_FILES = [
  'dura/v1/options.proto',
  'dura/v1/run_request.proto',
  'dura/v1/payload_ref.proto',
  'dura/v1/chat.proto',
  'dura/v1/signal.proto',
  'dura/v1/fork.proto',
  'dura/v1/tasks.proto',
  'dura/v1/dead_letter.proto',
  'dura/v1/envelope.proto',
  'dura/v1/event_parts.proto',
  'dura/v1/events.proto',
] as const;
