/** A Postgres database that exists only for one spec file. */
export interface TestDatabaseHandle {
  /** postgres://... of the freshly created database. */
  readonly url: string;
  readonly name: string;
  /** DROP DATABASE ... WITH (FORCE): open connections do not block teardown. Safe to call twice. */
  drop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
