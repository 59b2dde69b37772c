export { createPlanner, type Planner, PLANNER_CONSUMERS, type PlannerDeps } from './planner';
export {
  createRunDriver,
  DEFAULT_SNAPSHOT_EVERY,
  type DriveOutcome,
  type LocalTools,
  type RunDriver,
  type SnapshotOptions,
} from './run-driver';
export { checkPlan } from './plan-check';
export { loadPlannerConfig, type PlannerConfig, PlannerConfigSchema } from './config';
export { createSignalIntake, signalEventId } from './signal-intake';
export { createForkIntake, FORKS_DLQ_SOURCE } from './fork-intake';
export { createSnapshotStore, openSnapshotBucket, type SnapshotStore } from './snapshot-store';
export { createPayloadAccess } from './payload-access';
export { type Cancellations, createCancellations } from './cancellations';
export {
  parseTenantLimits,
  TENANT_LIMIT_CODE,
  tenantLimit,
  type TenantLimitPolicy,
  type TenantLimits,
} from './tenant-limits';
export {
  type Admission,
  createTenantAdmission,
  TENANT_RUNS_BUCKET,
  type TenantAdmission,
} from './tenant-admission';
export {
  type CallRequest,
  createFlowControl,
  type FlowAdmission,
  type FlowControl,
  KEY_LEASE_MS,
} from './flow-control';
export { createFlowStore, FLOW_BUCKET, type FlowStore, openFlowBucket, type Ticket } from './flow-store';
export { declarationEntry, startDeclaring } from './flow-declarations';
export { ModelLimitSchema, ModelLimitsSchema } from './model-limits';
export {
  type AgentGrants,
  AUTHORIZATION_CODES,
  type AuthorizationProblem,
  authorizeRequest,
  OPEN_AUTHORIZATION,
  parseInlineTools,
  parseTenantAgents,
  type ToolAuthorization,
} from './tool-authorization';
export { FORGED_CHILD_CODE } from './child-intake';
// Kept for agent and model modules written against the planner (`defineAgents`, `createModel(): Model`, and
// the README's names); new code imports them from @dura/agents, where they live.
export {
  type AgentsFile,
  createScriptedModel,
  defineAgents,
  type Model,
  type ModelTurn,
  type PlannerModel,
  replayRun,
} from '@dura/agents';
export { buildPlanner, type PlannerServiceParts } from './service';
export { createPlannerModel, type PlannerModelParts } from './planner-model';
export { agentCatalogue } from './agent-catalogue';
