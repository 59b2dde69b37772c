export { createDuraClient } from './client';
export type { DuraClient, SubmitRunInput, SubmitResult, WatchOptions } from './client';
