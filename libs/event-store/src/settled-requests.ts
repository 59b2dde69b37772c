import { RequestOne } from '@nats-io/nats-core/internal';

interface RequestOneInternals {
  resolver(err: Error | null, msg: unknown): void;
  cancel(err?: Error): void;
  timer?: { cancel(): void };
  mux: { cancel(request: unknown): void };
}

const settled = new WeakSet<object>();
let installed = false;

/**
 * nats.js ends every request, answered or not, with `cancel()`, and `cancel()` rejects the request's promise
 * with a new `RequestError`. For an answered request that rejection changes nothing (the promise is settled),
 * but the Error and its stack are built anyway: one per JetStream publish ack, about 5% of a worker's CPU.
 * Installed once per process: a request that was answered (`resolver` ran) is cancelled without that Error;
 * every other path (a timeout, a closed connection, an explicit cancel) runs nats.js's own code unchanged.
 * Skipped, leaving nats.js as it is, when its request class does not have the shape this was written for.
 */
export function skipSettledRequestErrors(): void {
  if (installed) return;
  installed = true;
  const proto = (RequestOne as unknown as { prototype: Partial<RequestOneInternals> }).prototype;
  const { resolver, cancel } = proto;
  if (typeof resolver !== 'function' || typeof cancel !== 'function') return;
  proto.resolver = function (this: RequestOneInternals, err, msg) {
    settled.add(this);
    resolver.call(this, err, msg);
  };
  proto.cancel = function (this: RequestOneInternals, err) {
    if (err !== undefined || !settled.has(this)) {
      cancel.call(this, err);
      return;
    }
    this.timer?.cancel();
    this.mux.cancel(this);
  };
}
