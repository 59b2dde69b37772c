import { headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/nats-core';
import {
  ContractViolation,
  DIRECT_CALL_HEADERS,
  DIRECT_CALL_QUEUE,
  directCallRequestOf,
  SUBJECTS,
  type ToolTask,
} from '@dura/contracts';
import { duraTracer, type Logger } from '@dura/service-kit';
import { DURA_ATTRS, withConsumerSpan } from '@dura/telemetry';
import type { InPlaceCallOptions, LocalCallOutcome } from './in-place-calls';
import { parseTask } from './tool-task';

/** How often a gateway running a direct call tells the planner it still does. */
export const DIRECT_CALL_WORKING_EVERY_MS = 1_000;

const EMPTY: Uint8Array = new Uint8Array(0);
const UTF8 = new TextEncoder();

export interface DirectCallDoor {
  /** Settles once the server has the subscription: a planner's request then finds this gateway. */
  ready: Promise<void>;
  /**
   * Takes no more calls. With `drain`, waits for those running until its deadline, then answers each still
   * running `failed` (its planner sends it as a tool task, to another replica) and returns their tasks, whose
   * leases the caller may release as it does for handed-back tool tasks.
   */
  stop(drain?: { deadline: number }): Promise<ToolTask[]>;
}

/**
 * Runs the calls planners hand straight to a gateway (`dura.call.<tool>`, queue group `dura-gateways`): each
 * one as a worker runs a call in place (claimed where its tool needs it, run, recorded, its observation
 * published right behind the run's last event), answered with where the observation landed. While it runs,
 * a `working` reply goes out every second, so the planner can tell a long call from a gateway gone. A call
 * this gateway does not run directly (unknown tool, a limit across replicas, too many running, stopping) is
 * declined, and one it could not run is answered `failed`: the planner then sends it as a tool task.
 */
export function serveDirectCalls(deps: {
  nc: NatsConnection;
  local: {
    runs(tool: string): boolean;
    run(task: ToolTask, options?: InPlaceCallOptions): Promise<LocalCallOutcome>;
  };
  log: Logger;
  /** Direct calls running at once, past which one is declined. */
  maxInFlight: number;
  workingEveryMs?: number;
}): DirectCallDoor {
  const tracer = duraTracer();
  const running = new Set<Promise<void>>();
  /** The calls being run, by the message to answer, with their `working` timer: what a drain hands back. */
  const calls = new Map<Msg, { task: ToolTask; working: NodeJS.Timeout }>();
  let stopping = false;
  const sub = deps.nc.subscribe(SUBJECTS.allDirectCalls, {
    queue: DIRECT_CALL_QUEUE,
    callback: (err, msg) => {
      if (err) return deps.log.warn('direct calls not taken: the subscription failed', { err });
      const answered = answer(msg).finally(() => running.delete(answered));
      running.add(answered);
    },
  });

  function respond(msg: Msg, kind: string, set: Record<string, number> = {}, body: Uint8Array = EMPTY): void {
    const headers = natsHeaders();
    headers.set(DIRECT_CALL_HEADERS.reply, kind);
    for (const [name, value] of Object.entries(set)) headers.set(name, String(value));
    try {
      msg.respond(body, { headers });
    } catch (err) {
      deps.log.warn('could not answer a direct call', { subject: msg.subject, err });
    }
  }

  async function answer(msg: Msg): Promise<void> {
    if (!msg.reply)
      return deps.log.warn('a direct call without a reply subject: ignored', { subject: msg.subject });
    const decline = (reason: string) => respond(msg, 'declined', {}, UTF8.encode(reason));
    if (stopping) return decline('the gateway is stopping');
    // The set takes this call once `answer` returns its promise: it holds the others alone here.
    if (running.size >= deps.maxInFlight)
      return decline(`${deps.maxInFlight} direct calls are running at this gateway, the most it takes`);
    let task: ToolTask;
    let options: InPlaceCallOptions;
    try {
      task = parseTask(msg, 'direct');
      const request = directCallRequestOf((name) => msg.headers?.get(name) || undefined);
      if (!request.ok) throw new ContractViolation(request.problem, [request.problem]);
      options = {
        ...(request.request.after === undefined ? {} : { after: request.request.after }),
        ...(request.request.fresh ? { fresh: true } : {}),
      };
    } catch (err) {
      // The tool task it becomes is refused the same way, and dead-lettered: nothing is dropped here.
      return respond(msg, 'failed', {}, UTF8.encode((err as Error).message));
    }
    if (!deps.local.runs(task.tool))
      return decline(
        `calls of ${task.tool} do not run directly at this gateway (unknown, or limited across replicas)`,
      );
    const working = setInterval(
      () => respond(msg, 'working'),
      deps.workingEveryMs ?? DIRECT_CALL_WORKING_EVERY_MS,
    );
    calls.set(msg, { task, working });
    try {
      const outcome = await withConsumerSpan(
        tracer,
        {
          destination: msg.subject,
          destinationTemplate: `${SUBJECTS.directCallPrefix}.{tool}`,
          consumerGroup: DIRECT_CALL_QUEUE,
          messageId: task.idempotencyKey,
          ...(msg.headers ? { headers: msg.headers } : {}),
          attributes: { [DURA_ATTRS.runId]: task.runId, [DURA_ATTRS.toolName]: task.tool },
        },
        () => deps.local.run(task, options),
      );
      clearInterval(working);
      // Handed back at a drain's deadline: the planner has its answer already.
      if (!calls.delete(msg)) return;
      respond(
        msg,
        'done',
        {
          ...(outcome.seq === undefined ? {} : { [DIRECT_CALL_HEADERS.seq]: outcome.seq }),
          ...(outcome.retryAfterMs === undefined
            ? {}
            : { [DIRECT_CALL_HEADERS.retryAfterMs]: outcome.retryAfterMs }),
        },
        outcome.stored ?? EMPTY,
      );
    } catch (err) {
      clearInterval(working);
      if (!calls.delete(msg)) return;
      deps.log.warn('a direct call failed here; the planner sends it as a tool task', {
        runId: task.runId,
        tool: task.tool,
        err,
      });
      respond(msg, 'failed', {}, UTF8.encode((err as Error).message));
    }
  }

  return {
    ready: deps.nc.flush(),
    async stop(drain) {
      stopping = true;
      sub.unsubscribe();
      await deps.nc.flush().catch(() => undefined);
      if (!drain) return [];
      if (calls.size > 0) deps.log.info(`direct calls draining: ${calls.size} running`);
      const left = drain.deadline - Date.now();
      if (left > 0)
        await Promise.race([
          Promise.allSettled([...running]),
          new Promise((resolve) => setTimeout(resolve, left).unref()),
        ]);
      const handedBack = [...calls];
      calls.clear();
      for (const [msg, { working }] of handedBack) {
        // The planner hears no more of a call once it is told `failed`, though the call still runs here.
        clearInterval(working);
        respond(msg, 'failed', {}, UTF8.encode('the gateway stopped before the call finished'));
      }
      if (handedBack.length > 0) {
        await deps.nc.flush().catch(() => undefined);
        deps.log.warn(
          `handed back ${handedBack.length} direct calls: their planners send them as tool tasks`,
          {
            keys: handedBack.map(([, { task }]) => task.idempotencyKey),
          },
        );
      }
      return handedBack.map(([, { task }]) => task);
    },
  };
}
