export { openDatabase, redact, rowsOf } from './database';
export type { Db, DbHandle, NotifyHandler, Unlisten } from './database';
export { listenerFor } from './listen';
