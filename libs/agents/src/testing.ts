// Test helpers of @dura/agents: an in-memory planner that writes a run's log as the planner would.
export { simulateRun, scriptedRequest, chargeSteps } from './simulated-run';
export type { SimulatedRun } from './simulated-run';
