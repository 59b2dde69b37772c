export { createPlanner, PLANNER_CONSUMERS } from './planner';
export type { Planner, PlannerDeps } from './planner';
export { createRunDriver } from './run-driver';
export type { RunDriver, DriveOutcome } from './run-driver';
export { createScriptedModel, scriptedTurn } from './scripted-model';
export type { Model, ModelTurn } from './model';
export { checkPlan } from './plan-check';
export { PlannerConfigSchema, loadPlannerConfig } from './config';
export type { PlannerConfig } from './config';
