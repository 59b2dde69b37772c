export { openDatabase, redact, rowsOf } from './database';
export type { Db, DbHandle } from './database';
