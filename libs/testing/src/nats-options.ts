export interface StartNatsServerOptions {
  port?: number;
  /** JetStream max_file_store, e.g. "64MB"; nats-server 2.9 has no flag for it, so it goes in a config file. */
  jetStreamMaxFileStore?: string;
  extraArgs?: string[];
  /** The JetStream store directory, owned by the caller (e.g. on a small mount); default a fresh temp dir. */
  storeDir?: string;
}

/** The config file body that sets limits nats-server only accepts from a config file. */
export function natsConfigFile(opts: StartNatsServerOptions): string | undefined {
  const size = opts.jetStreamMaxFileStore;
  if (size === undefined) return undefined;
  if (!/^\d+(\.\d+)?\s*[KMGTP]?B?$/i.test(size)) {
    throw new Error(`jetStreamMaxFileStore must look like "1024", "64MB" or "1G"; got "${size}"`);
  }
  return `jetstream {\n  max_file_store: ${size}\n}\n`;
}
