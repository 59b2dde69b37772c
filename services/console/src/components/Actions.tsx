import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod';
import {
  ForkAcceptedSchema,
  type ConsoleSession,
  type RunStateSchema,
  type RunStateSummarySchema,
} from '@dura/contracts';
import { verdictWaits } from '@dura/core';
import { api } from '../api/http';
import { navigate, runPath } from '../model/router';
import { eventLabel } from '../model/event-numbers';
import { ApprovalBox } from './ApprovalBox';
import { useRunPage } from './run-page-context';

type RunStateSummary = z.infer<typeof RunStateSummarySchema>;
type Call = z.infer<typeof RunStateSchema>['calls'][number];
const Accepted = z.object({ runId: z.string(), signalId: z.string(), duplicate: z.boolean() });
const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'rejected']);

/**
 * What may be done to the run, each shown only when the token's scopes allow it (the API checks again):
 * approve or reject what the run waits for (a call awaiting approval, or a code agent's ctx.approve verdict),
 * confirm or skip an in-doubt unsafe call, send a signal, cancel, fork.
 */
export function Actions({
  run,
  calls,
  session,
}: {
  run: RunStateSummary;
  /** The run's calls, once its full state is read (undefined until then): an approval shows its call. */
  calls: Call[] | undefined;
  session: ConsoleSession;
}) {
  const { runId, numberOf, selected } = useRunPage();
  const client = useQueryClient();
  const [message, setMessage] = useState<string>();
  const path = `/runs/${encodeURIComponent(runId)}`;
  const send = useMutation({
    mutationFn: (body: { name: string; payload?: unknown }) =>
      api(Accepted, `${path}/signals`, { method: 'POST', body }),
    onSuccess: (answer, body) => {
      setMessage(`Sent "${body.name}" (${answer.signalId}${answer.duplicate ? ', already sent' : ''}).`);
      void client.invalidateQueries({ queryKey: ['run', runId] });
    },
    onError: (err) => setMessage(err.message),
  });
  const cancel = useMutation({
    mutationFn: () => api(Accepted, `${path}/cancel`, { method: 'POST', body: {} }),
    onSuccess: () => setMessage('Cancel sent.'),
    onError: (err) => setMessage(err.message),
  });
  const fork = useMutation({
    mutationFn: (atSeq: number) =>
      api(ForkAcceptedSchema, `${path}/fork`, { method: 'POST', body: { atSeq } }),
    onSuccess: (answer) => navigate(runPath(answer.runId)),
    onError: (err) => setMessage(err.message),
  });
  const may = (scope: ConsoleSession['scopes'][number]) => session.scopes.includes(scope);
  const live = !TERMINAL.has(run.status);
  const approvals = verdictWaits(run.waits);
  const operator = run.waits.find((w) => w.kind === 'operator' && w.callId !== undefined);
  const forkAt = selected ?? run.lastSeq;
  if (!may('signal') && !may('cancel') && !may('submit')) return null;
  return (
    <section className="actions" aria-label="Actions" data-testid="actions">
      {/* An approval is shown with the call it approves (its tool and arguments), so not before the run's calls
          are read: no one approves a call they have not been shown. */}
      {may('signal') &&
        calls &&
        approvals.map((wait) => (
          <ApprovalBox
            key={wait.waitId}
            wait={wait}
            run={run}
            calls={calls}
            onVerdict={(signal) => send.mutate(signal)}
          />
        ))}
      {may('signal') && operator && (
        <div className="action-group" data-testid="in-doubt">
          <span>
            Call <code>{operator.callId}</code> may or may not have taken effect
          </span>
          <button
            type="button"
            onClick={() => send.mutate({ name: 'confirm', payload: { callId: operator.callId ?? '' } })}
          >
            Confirm it happened
          </button>
          <button
            type="button"
            onClick={() => send.mutate({ name: 'skip', payload: { callId: operator.callId ?? '' } })}
          >
            Skip it
          </button>
        </div>
      )}
      {may('signal') && live && <SignalForm onSend={(name, payload) => send.mutate({ name, payload })} />}
      <div className="action-group">
        {may('cancel') && live && (
          <button type="button" className="danger" onClick={() => cancel.mutate()}>
            Cancel run
          </button>
        )}
        {may('submit') && (
          <button type="button" onClick={() => fork.mutate(forkAt)}>
            Fork at {eventLabel(numberOf, forkAt)}
          </button>
        )}
      </div>
      {message && (
        <p className="muted" role="status" data-testid="action-message">
          {message}
        </p>
      )}
    </section>
  );
}

function SignalForm({ onSend }: { onSend: (name: string, payload: unknown) => void }) {
  const [name, setName] = useState('');
  const [payload, setPayload] = useState('');
  const [problem, setProblem] = useState<string>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      onSend(name.trim(), payload.trim() === '' ? undefined : (JSON.parse(payload) as unknown));
      setProblem(undefined);
    } catch {
      setProblem('The payload must be JSON, e.g. {"ok": true}');
    }
  };
  return (
    <form className="action-group" onSubmit={submit} aria-label="Send a signal">
      <input
        aria-label="Signal name"
        placeholder="signal name"
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <input
        aria-label="Signal payload (JSON)"
        placeholder='payload, e.g. {"ok": true}'
        value={payload}
        onChange={(e) => setPayload(e.target.value)}
      />
      <button type="submit" disabled={name.trim() === ''}>
        Send signal
      </button>
      {problem && <span className="error">{problem}</span>}
    </form>
  );
}
