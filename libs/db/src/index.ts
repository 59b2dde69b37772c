export { openDatabase, redact, rowsOf } from './database';
export type { Db, DbHandle, NotifyHandler, Unlisten } from './db-handle';
export { listenerFor } from './listen';
