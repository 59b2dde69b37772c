// Shared with the `dura` CLI: the readable event line lives in the client SDK.
export { formatEvent } from '@dura/client';
