export { createPlanner, PLANNER_CONSUMERS } from './planner';
export type { Planner, PlannerDeps } from './planner';
export { createRunDriver } from './run-driver';
export type { RunDriver, DriveOutcome } from './run-driver';
export { checkPlan } from './plan-check';
export { PlannerConfigSchema, loadPlannerConfig } from './config';
export type { PlannerConfig } from './config';
export { createSignalIntake, signalEventId } from './signal-intake';
export { createForkIntake, FORKS_DLQ_SOURCE } from './fork-intake';
export { createSnapshotStore, openSnapshotBucket } from './snapshot-store';
export type { SnapshotStore } from './snapshot-store';
export { DEFAULT_SNAPSHOT_EVERY } from './run-driver';
export type { SnapshotOptions } from './run-driver';
export { createPayloadAccess } from './payload-access';
export { createCancellations } from './cancellations';
export type { Cancellations } from './cancellations';
export { parseTenantLimits, tenantLimit, TENANT_LIMIT_CODE } from './tenant-limits';
export type { TenantLimits, TenantLimitPolicy } from './tenant-limits';
export { createTenantAdmission, TENANT_RUNS_BUCKET } from './tenant-admission';
export type { TenantAdmission, Admission } from './tenant-admission';
export { createFlowControl, KEY_LEASE_MS } from './flow-control';
export type { CallRequest, FlowAdmission, FlowControl } from './flow-control';
export { createFlowStore, FLOW_BUCKET, openFlowBucket } from './flow-store';
export { declarationEntry, startDeclaring } from './flow-declarations';
export type { FlowStore, Ticket } from './flow-store';
export { ModelLimitSchema, ModelLimitsSchema } from './model-limits';
export {
  authorizeRequest,
  OPEN_AUTHORIZATION,
  AUTHORIZATION_CODES,
  parseTenantAgents,
  parseInlineTools,
} from './tool-authorization';
export type { ToolAuthorization, AgentGrants, AuthorizationProblem } from './tool-authorization';
export { FORGED_CHILD_CODE } from './child-intake';
// Kept for agent and model modules written against the planner (`defineAgents`, `createModel(): Model`, and
// the README's names); new code imports them from @dura/agents, where they live.
export { defineAgents, replayRun, createScriptedModel } from '@dura/agents';
export type { Model, PlannerModel, ModelTurn, AgentsFile } from '@dura/agents';
export { buildPlanner } from './service';
export { createPlannerModel } from './planner-model';
export type { PlannerModelParts } from './planner-model';
export type { PlannerServiceParts } from './service';
export type { LocalTools } from './run-driver';
export { agentCatalogue } from './agent-catalogue';
