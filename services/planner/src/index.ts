export { createPlanner, PLANNER_CONSUMERS } from './planner';
export type { Planner, PlannerDeps } from './planner';
export { createRunDriver } from './run-driver';
export type { RunDriver, DriveOutcome } from './run-driver';
export { createScriptedModel, scriptedTurn, fileCallLog } from './scripted-model';
export type { ModelCall } from './scripted-model';
export type { Model, ModelTurn } from './model';
export { checkPlan } from './plan-check';
export { PlannerConfigSchema, loadPlannerConfig } from './config';
export type { PlannerConfig } from './config';
export { createSignalIntake, signalEventId } from './signal-intake';
export { createForkIntake, FORKS_DLQ_SOURCE } from './fork-intake';
export { createSnapshotStore, openSnapshotBucket } from './snapshot-store';
export type { SnapshotStore } from './snapshot-store';
export { DEFAULT_SNAPSHOT_EVERY } from './run-driver';
export type { SnapshotOptions } from './run-driver';
export { replayRun, replayModelFor, recordedModel } from './replay';
export type { ReplayInput, ReplayResult, ReplayDivergence, ReplayModelOptions } from './replay';
export { plannerStep, startDraft, thoughtDraft, isFinalModelError } from './planner-step';
export type { PlannerStep, PlannerStepPorts } from './planner-step';
export { createAgentModel, unknownAgent } from './agents/agent-model';
export type { AgentModelDeps, PayloadAccess } from './agents/agent-model';
export { AgentRegistry, loadAgentRegistry, defineAgents } from './agents/registry';
export type { ServedAgent } from './agents/registry';
export { AgentDefinitionSchema, AgentsFileSchema, ModelSettingsSchema } from './agents/definition';
export type { AgentDefinition, AgentsFile, ModelSettings } from './agents/definition';
export { buildConversation, expandPrompt, promptHashOf } from './agents/conversation';
export { createModelRouter } from './model-router';
export { createPayloadAccess } from './payload-access';
export { createCancellations } from './cancellations';
export type { Cancellations } from './cancellations';
export { parseTenantLimits, tenantLimit, TENANT_LIMIT_CODE } from './tenant-limits';
export type { TenantLimits, TenantLimitPolicy } from './tenant-limits';
export { createTenantAdmission, TENANT_RUNS_BUCKET } from './tenant-admission';
export type { TenantAdmission, Admission } from './tenant-admission';
export {
  authorizeRequest,
  OPEN_AUTHORIZATION,
  AUTHORIZATION_CODES,
  parseTenantAgents,
  parseInlineTools,
} from './tool-authorization';
export type { ToolAuthorization, AgentGrants, AuthorizationProblem } from './tool-authorization';
export { FORGED_CHILD_CODE } from './child-intake';
