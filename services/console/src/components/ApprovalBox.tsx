import type { z } from 'zod';
import type { RunStateSchema, RunStateSummarySchema } from '@dura/contracts';
import { verdictSignal } from '@dura/core';
import { fullTime } from '../model/format';
import { ON_TIMEOUT } from '../model/verdicts';
import { Value } from './RunFacts';

type RunStateSummary = z.infer<typeof RunStateSummarySchema>;
type Call = z.infer<typeof RunStateSchema>['calls'][number];
type Wait = RunStateSummary['waits'][number];
type Verdict = ReturnType<typeof verdictSignal>;

/**
 * One wait for a person's verdict (a call awaiting approval, or a `ctx.approve` wait), with what a person
 * needs to answer it: the tool and its arguments, who may answer (the `signal` scope in the run's tenant, and
 * the signal the answer is), the deadline and what happens then; and the Approve / Reject buttons.
 */
export function ApprovalBox({
  wait,
  run,
  calls,
  onVerdict,
}: {
  wait: Wait;
  run: RunStateSummary;
  /** The run's calls (from its full state). */
  calls: Call[];
  onVerdict: (signal: Verdict) => void;
}) {
  const call = calls.find((c) => c.callId === wait.callId);
  const verdict = wait.kind === 'signal';
  const answers = verdict
    ? `signal "${wait.signal ?? '?'}" with {"approved": true | false}`
    : `signal "approve" or "reject" naming call ${wait.callId ?? '?'}`;
  return (
    <div className="action-group approval" data-testid="approval" data-wait-id={wait.waitId}>
      <p className="approval-what" data-testid="approval-tool">
        {verdict ? (
          <>
            Waits for a verdict (signal <code>{wait.signal}</code>)
            {call && (
              <>
                {' '}
                through <code>{call.tool}</code>
              </>
            )}
          </>
        ) : (
          <>
            Call <code>{wait.callId}</code> to <strong>{call?.tool ?? 'an unknown tool'}</strong> waits for
            approval
          </>
        )}
      </p>
      {call && (
        <div data-testid="approval-args">
          <Value name="arguments" value={call.args} testId="approval-args-value" />
          {call.argsRef && <span className="muted"> (stored apart: {call.argsRef.uri})</span>}
        </div>
      )}
      <p className="muted" data-testid="approval-who">
        Who may answer: a token with scope <code>signal</code> in tenant <code>{run.tenant}</code>, sending
        the {answers}.
      </p>
      <p className="muted" data-testid="approval-deadline">
        {wait.timeoutAt ? (
          <>
            Deadline <time dateTime={wait.timeoutAt}>{fullTime(wait.timeoutAt)}</time>
            {wait.onTimeout ? `: if nobody answers, ${ON_TIMEOUT[wait.onTimeout]} (${wait.onTimeout})` : ''}.
          </>
        ) : (
          'No deadline: the run waits until someone answers.'
        )}
      </p>
      <div className="action-group">
        <button type="button" onClick={() => onVerdict(verdictSignal(wait, { approved: true }))}>
          Approve
        </button>
        <button
          type="button"
          className="danger"
          onClick={() =>
            onVerdict(verdictSignal(wait, { approved: false, reason: 'rejected in the console' }))
          }
        >
          Reject
        </button>
      </div>
    </div>
  );
}
