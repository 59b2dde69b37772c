// The services' durable consumers, for tests that feed them malformed or hostile messages
// (fuzz-inputs.e2e.spec.ts, hostile-inputs.e2e.spec.ts) and then check that each took and settled everything.
import type { ConsumerInfo, JetStreamManager } from '@nats-io/jetstream';
import { STREAMS } from '@dura/contracts';
import { eventually } from './system';

/** Every durable consumer of the planner and the gateway, with its stream. */
export const SERVICE_DURABLES: [string, string][] = [
  [STREAMS.requests, 'planner-intake'],
  [STREAMS.requests, 'planner-signals'],
  [STREAMS.requests, 'planner-fork'],
  [STREAMS.tasks, 'planner-decide'],
  [STREAMS.tasks, 'tool-gateway'],
  [STREAMS.tasks, 'gateway-timers'],
];

/** The consumer's info once it has nothing pending and nothing unacknowledged (`what` names the wait). */
export function settledConsumer(
  jsm: JetStreamManager,
  [stream, durable]: [string, string],
  what: string,
): Promise<ConsumerInfo> {
  return eventually(
    async () => {
      const info = await jsm.consumers.info(stream, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? info : undefined;
    },
    what,
    60_000,
  );
}
