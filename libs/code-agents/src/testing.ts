export { SimRun, answer, countingFresh, types, TEST_MODEL } from './testing/sim-planner';
export type { World, Ending, ToolFn } from './testing/sim-planner';
