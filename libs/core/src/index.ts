export { concurrencyKeyOf, initialRunState, isTerminal, TERMINAL_STATUSES } from './run-state';
export type {
  RunState,
  RunStatus,
  CallState,
  CallStatus,
  WaitState,
  OperatorVerdict,
  BudgetState,
  ChildRunState,
  TurnState,
  PromptState,
} from './run-state';
export { evolve, fold } from './evolve';
export { OUTCOME_UNKNOWN } from './evolve-calls';
export { causeChain } from './causes';
export { ALLOWED_FROM, STATUS_AFTER, canApply } from './lifecycle';
export { InvalidTransition } from './errors';
export { canonicalJson } from './canonical-json';
export { argsHash, jsonHash, idempotencyKey, decisionEventId, callId } from './idempotency';
export {
  resolveReferences,
  resolveStepArgs,
  referencedArgs,
  planReferenceIssues,
  stepReferenceIssues,
  BadReference,
} from './references';
export type { ReferenceScope } from './references';
export { nextAction, followUps, nextCallId, cancelReasonOf } from './next-action';
export { CANCEL_SIGNAL, APPROVE_SIGNAL, REJECT_SIGNAL, RAISE_BUDGET_SIGNAL, RETRY_SIGNAL } from './signals';
export { openWaits, isDispatchable, childRunIdFor } from './control';
export { approvalVerdict, callApprovalOf, verdictWaits, verdictSignal } from './approval';
export type { ApprovalVerdict, VerdictWait } from './approval';
export { budgetExcess, budgetExceededEvents } from './budget';
export type { BudgetExcess, Reservation } from './budget';
export type { PlannerAction } from './next-action';
export type { EventDraft } from './event-draft';
export { diffRuns } from './diff-runs';
export type { RunDivergence, DiffSide } from './diff-runs';
export { planFork, forkEventId } from './fork-log';
export type { ForkInput, ForkPlan, ForkProblem } from './fork-log';
export { parseCron, nextLocalMatch, InvalidCron } from './cron';
export type { CronExpression } from './cron';
export { assertTimeZone, zoneOffset, toLocal, instantsOf, UnknownTimeZone } from './time-zone';
export { timingOf, checkSchedule, nextTicks, planTicks } from './schedule-plan';
export type { Timing, TickPlan } from './schedule-plan';
export { decideTicks, needsLastRunStatus, withHistory } from './schedule-decide';
export { createTokenFeed, answerTexts } from './token-feed';
export type { TokenFeed } from './token-feed';
export { createTokenFrames } from './token-frames';
export type { TokenFrame, TokenFrames } from './token-frames';
export { createTokenText } from './token-text';
export type { AnswerText, TokenText } from './token-text';
export {
  admittableOf,
  capacityOf,
  capacityReason,
  DEFAULT_HEADROOM_SECONDS,
  emptyLimitRecord,
  limitsFor,
  LINE_RECHECK_MAX_MS,
  LINE_WAKE_RETRY_MS,
  MAX_LINE,
  QUEUE_GRACE_MS,
  refilled,
  SLOT_RECHECK_MAX_MS,
  throttleFactor,
  TICKET_HORIZON_CALLS,
} from './flow-limits';
export type {
  CallCost,
  LimitName,
  LimitRecord,
  LineEntry,
  ModelLimit,
  Shares,
  SlotOutcome,
  SlotWaiter,
  TicketOutcome,
} from './flow-limits';
export { refundTicket, settleTicket, takeTicket, throttled } from './flow-control';
export { nextInLine, releaseSlot, renewSlot, takeSlot } from './flow-slots';
export type { SlotCaller } from './flow-slots';
export { aheadInLine, dueInLine, leftLine, lineOrder } from './flow-line';
export { decodeLimitRecord, encodeLimitRecord, LIMIT_RECORD_VERSION } from './flow-record-codec';
export type { Waiter } from './flow-line';
export { LruCache } from './lru-cache';
export {
  UNSEEN_RUN_GRACE_MS,
  IDLE_RECORD_MS,
  emptyGateRecord,
  runInFlight,
  arrive,
  isDue,
  closeWindow,
  firingDone,
  isIdle,
  resolveGateKey,
} from './run-gate';
export type { Arrival, RunPhase } from './run-gate';
export {
  CONCURRENCY_KEY_PREFIX,
  DECLARATION_FRESH_MS,
  DECLARATION_REFRESH_MS,
  LIMIT_COLUMNS,
  declarationKey,
  declarationText,
  declaredFigures,
  limitCells,
  limitRows,
  type LimitDeclaration,
} from './flow-limits-view';
