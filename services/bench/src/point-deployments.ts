// The deployments a curve's points run on (F, P and Q): a fresh one for every point, as the full-size bench
// measures them, or up to `--points-per-deployment` points in turn on one, as the tiny run does (a deployment's
// start costs more CPU than a tiny point's runs). Only one is open at a time, so a point's CPU groups (every
// nats-server child of the bench, every service of the deployment) hold no other deployment's processes.
import {
  openDeployment,
  runningOf,
  startServices,
  type Deployment,
  type Replicas,
  type Running,
  type ServiceName,
} from './deployment';

/**
 * Whether a deployment running `running` can serve a point of `wanted` by starting replicas only: it runs no
 * more of any kind than the point wants, and none of the kind the point does not use (workers, or planners and
 * gateways apart).
 */
export function servesWithMore(running: Running, wanted: Replicas): boolean {
  const target: Running = wanted.workers
    ? { projector: 1, worker: wanted.workers }
    : { projector: 1, 'tool-gateway': wanted.gateways, planner: wanted.planners };
  return Object.entries(running).every(([kind, n]) => n <= (target[kind as ServiceName] ?? 0));
}

export interface PointDeployments extends AsyncDisposable {
  /**
   * The deployment of the next point, running `replicas` (started as needed): the previous point's when it has
   * served fewer than `perDeployment` points, on as many nats-server nodes, and can; else a fresh one, the
   * previous closed first.
   */
  next(prefix: string, replicas: Replicas, natsNodes?: number): Promise<Deployment>;
}

/** Deployments for consecutive points, `perDeployment` points at most on each (1: each point on a fresh one). */
export function pointDeployments(perDeployment: number): PointDeployments {
  let current: { deployment: Deployment; natsNodes: number; points: number } | undefined;
  const close = async () => {
    const closing = current;
    current = undefined;
    await closing?.deployment.close();
  };
  return {
    async next(prefix, replicas, natsNodes = 1) {
      const reuse =
        current !== undefined &&
        current.points < perDeployment &&
        current.natsNodes === natsNodes &&
        servesWithMore(runningOf(current.deployment), replicas);
      if (!reuse) {
        await close();
        current = { deployment: await openDeployment(prefix, {}, { natsNodes }), natsNodes, points: 0 };
      }
      const open = current as NonNullable<typeof current>;
      open.points += 1;
      await startServices(open.deployment, replicas);
      return open.deployment;
    },
    [Symbol.asyncDispose]: close,
  };
}
