import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { ForkAcceptedSchema, type ConsoleSession, type ForkChanges, type RunEvent } from '@dura/contracts';
import { api } from '../api/http';
import { navigate, runPath } from '../model/router';
import { eventLabel } from '../model/event-numbers';
import { useRunPage } from './run-page-context';

/** What is being edited: the run's input (a fork at its first event) or one call's recorded result. */
type Target =
  | { kind: 'input'; atSeq: number; value: unknown }
  | { kind: 'result'; atSeq: number; callId: string; value: unknown };

/**
 * "Fork with edited state": fork the run with an edited input (at its first event) or, on a selected tool
 * result, with that result edited. An editor prefilled with the recorded value; the API records the edit as
 * this credential's and refuses one that cannot be made (its message is shown here). Only for `submit`.
 */
export function ForkWithEdits({
  events,
  selected,
  session,
}: {
  events: readonly RunEvent[];
  selected: RunEvent | undefined;
  session: ConsoleSession;
}) {
  const { runId, numberOf } = useRunPage();
  const [target, setTarget] = useState<Target>();
  const first = events[0];
  if (!session.scopes.includes('submit') || first?.type !== 'run_requested') return null;
  const result = selected?.type === 'tool_call_completed' ? selected : undefined;
  return (
    <section className="fork-edits" aria-label="Fork with edited state" data-testid="fork-edits">
      <div className="action-group">
        <button
          type="button"
          onClick={() =>
            setTarget({ kind: 'input', atSeq: first.seq, value: first.data.request.input ?? null })
          }
        >
          Fork with edited input
        </button>
        {result && (
          <button
            type="button"
            onClick={() =>
              setTarget({
                kind: 'result',
                atSeq: result.seq,
                callId: result.data.callId,
                value: result.data.result,
              })
            }
          >
            Fork with edited result of {result.data.callId}
          </button>
        )}
      </div>
      {target && (
        <EditForm
          key={`${target.kind}-${target.atSeq}`}
          runId={runId}
          target={target}
          label={eventLabel(numberOf, target.atSeq)}
          onClose={() => setTarget(undefined)}
        />
      )}
    </section>
  );
}

function EditForm({
  runId,
  target,
  label,
  onClose,
}: {
  runId: string;
  target: Target;
  label: string;
  onClose: () => void;
}) {
  const [text, setText] = useState(() => JSON.stringify(target.value, null, 2));
  const [problem, setProblem] = useState<string>();
  const fork = useMutation({
    mutationFn: (edit: ForkChanges) =>
      api(ForkAcceptedSchema, `/runs/${encodeURIComponent(runId)}/fork`, {
        method: 'POST',
        body: { atSeq: target.atSeq, edit },
      }),
    onSuccess: (answer) => navigate(runPath(answer.runId)),
    onError: (err) => setProblem(err.message),
  });
  const what = target.kind === 'input' ? 'the input' : `the result of ${target.callId}`;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch (err) {
      setProblem(`${what} must be JSON: ${(err as Error).message}`);
      return;
    }
    setProblem(undefined);
    fork.mutate(
      target.kind === 'input'
        ? { input: value as never }
        : { toolResult: { callId: target.callId, output: value as never } },
    );
  };
  return (
    <form className="fork-editor" onSubmit={submit} aria-label={`Edit ${what}`} data-testid="fork-editor">
      <p className="muted">
        Fork at {label} with {what} edited. The fork records the edit as yours, with the original value’s
        hash;
        {target.kind === 'result'
          ? ' the call is not run again: its effect happened once, in this run.'
          : ' the run starts again from its first event with this input.'}
      </p>
      <textarea
        aria-label={`Edited ${what} (JSON)`}
        spellCheck={false}
        rows={Math.min(16, Math.max(4, text.split('\n').length + 1))}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <div className="action-group">
        <button type="submit" disabled={fork.isPending}>
          Fork with this {target.kind === 'input' ? 'input' : 'result'}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
      {problem && (
        <p className="error" role="alert" data-testid="fork-edit-error">
          {problem}
        </p>
      )}
    </form>
  );
}
