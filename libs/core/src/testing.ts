// Test helpers for code built on the fold: a given/when/then decider specification, event builders and
// fast-check arbitraries of run histories. Pure like the rest of the library; only tests import this entry.
export {
  SpecificationFailed,
  assertMatches,
  deciderSpecification,
  runSpecification,
  given,
  deepFreeze,
} from './testing/specification';
export type { DeepPartial, Outcome, Decider, Given } from './testing/specification';
export { runEvent, requestedData, thoughtData, RunLog } from './testing/run-log';
export {
  arbJsonValue,
  arbArgs,
  arbRunId,
  arbHistoryPlan,
  arbValidHistory,
  buildHistory,
} from './testing/arbitraries';
export { arbAnyEvent, arbGarbageHistory, arbRandomEvents, arbMutatedHistory } from './testing/garbage';
export type { HistoryPlan, RoundPlan, CallPlan, Ending } from './testing/arbitraries';
