export {
  type BudgetState,
  type CallState,
  type CallStatus,
  type ChildRunState,
  concurrencyKeyOf,
  initialRunState,
  isTerminal,
  type OperatorVerdict,
  type PromptState,
  type RunState,
  type RunStatus,
  TERMINAL_STATUSES,
  type TurnState,
  type WaitState,
} from './run-state';
export { evolve, fold } from './evolve';
export { type CallKind, callsOfKind } from './call-kinds';
export { OUTCOME_UNKNOWN } from './evolve-calls';
export { causeChain } from './causes';
export { ALLOWED_FROM, canApply, STATUS_AFTER } from './lifecycle';
export { InvalidTransition } from './errors';
export { canonicalJson } from './canonical-json';
export { argsHash, callId, decisionEventId, idempotencyKey, jsonHash, sha256Hex } from './idempotency';
export {
  BadReference,
  planReferenceIssues,
  referencedArgs,
  type ReferenceScope,
  resolveReferences,
  resolveStepArgs,
  stepReferenceIssues,
} from './references';
export { cancelReasonOf, followUps, nextAction, nextCallId, type PlannerAction } from './next-action';
export { APPROVE_SIGNAL, CANCEL_SIGNAL, RAISE_BUDGET_SIGNAL, REJECT_SIGNAL, RETRY_SIGNAL } from './signals';
export { childRunIdFor, isDispatchable, openWaits } from './control';
export {
  approvalVerdict,
  type ApprovalVerdict,
  callApprovalOf,
  verdictSignal,
  type VerdictWait,
  verdictWaits,
} from './approval';
export { budgetExceededEvents, budgetExcess, type BudgetExcess, type Reservation } from './budget';
export type { EventDraft } from './event-draft';
export { diffRuns, type DiffSide, type RunDivergence } from './diff-runs';
export { forkEventId, type ForkInput, type ForkPlan, type ForkProblem, planFork } from './fork-log';
export { type CronExpression, InvalidCron, nextLocalMatch, parseCron } from './cron';
export { assertTimeZone, instantsOf, toLocal, UnknownTimeZone, zoneOffset } from './time-zone';
export { checkSchedule, nextTicks, planTicks, type TickPlan, type Timing, timingOf } from './schedule-plan';
export { decideTicks, needsLastRunStatus, withHistory } from './schedule-decide';
export { answerTexts, createTokenFeed, type TokenFeed } from './token-feed';
export { createTokenFrames, type TokenFrame, type TokenFrames } from './token-frames';
export { type AnswerText, createTokenText, type TokenText } from './token-text';
export {
  admittableOf,
  type CallCost,
  capacityOf,
  capacityReason,
  DEFAULT_HEADROOM_SECONDS,
  emptyLimitRecord,
  type LimitName,
  type LimitRecord,
  limitsFor,
  LINE_RECHECK_MAX_MS,
  LINE_WAKE_RETRY_MS,
  type LineEntry,
  MAX_LINE,
  type ModelLimit,
  QUEUE_GRACE_MS,
  refilled,
  type Shares,
  SLOT_RECHECK_MAX_MS,
  type SlotOutcome,
  type SlotWaiter,
  throttleFactor,
  TICKET_HORIZON_CALLS,
  type TicketOutcome,
} from './flow-limits';
export { refundTicket, settleTicket, takeTicket, throttled } from './flow-control';
export { nextInLine, releaseSlot, renewSlot, type SlotCaller, takeSlot } from './flow-slots';
export { aheadInLine, dueInLine, leftLine, lineOrder, type Waiter } from './flow-line';
export { decodeLimitRecord, encodeLimitRecord, LIMIT_RECORD_VERSION } from './flow-record-codec';
export { LruCache } from './lru-cache';
export {
  type Arrival,
  arrive,
  closeWindow,
  emptyGateRecord,
  firingDone,
  IDLE_RECORD_MS,
  isDue,
  isIdle,
  resolveGateKey,
  runInFlight,
  type RunPhase,
  UNSEEN_RUN_GRACE_MS,
} from './run-gate';
export {
  CONCURRENCY_KEY_PREFIX,
  DECLARATION_FRESH_MS,
  DECLARATION_REFRESH_MS,
  declarationKey,
  declarationText,
  declaredFigures,
  LIMIT_COLUMNS,
  limitCells,
  type LimitDeclaration,
  limitRows,
} from './flow-limits-view';
