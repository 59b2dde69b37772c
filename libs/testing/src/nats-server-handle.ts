/** A NATS server with JetStream, owned by one spec file. */
export interface NatsServerHandle {
  /** nats://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** The JetStream store directory (-sd); inside the container in containers mode. */
  readonly storeDir: string;
  /** SIGTERM, then waits for exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit: a crash, for fault tests. */
  kill(): Promise<void>;
  /** Starts again on the same port and store dir, so JetStream data survives; resolves once ready. */
  restart(): Promise<void>;
  /** Stops the server and removes the store dir. */
  [Symbol.asyncDispose](): Promise<void>;
}
