import { DuraError } from '@dura/contracts';

/** An event that cannot follow the run's current state. The log is never rewritten; callers decide what to do. */
export class InvalidTransition extends DuraError {
  readonly eventType: string;
  readonly fromStatus: string;
  readonly seq: number;

  constructor(eventType: string, fromStatus: string, seq: number, reason: string) {
    super(
      'invalid_transition',
      `${eventType} at seq ${seq} cannot apply to a run that is ${fromStatus}: ${reason}`,
    );
    this.eventType = eventType;
    this.fromStatus = fromStatus;
    this.seq = seq;
  }
}
