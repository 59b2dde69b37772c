import { useState, type FormEvent } from 'react';
import { useTriggers, type ScheduleCommands } from '../api/schedules';
import { fullTime } from '../model/format';
import { agentLabel } from '../model/json-field';
import { ConfirmButton } from './ConfirmButton';
import { Field } from './Field';

/** The event triggers: the subject each reads and the agent it starts; with `commands`, delete. */
export function TriggerTable({ commands, operator }: { commands?: ScheduleCommands; operator: boolean }) {
  const triggers = useTriggers();
  if (triggers.error) return <p className="error">{triggers.error.message}</p>;
  const list = triggers.data?.triggers ?? [];
  if (triggers.isSuccess && list.length === 0) return <p className="empty">No event triggers yet.</p>;
  return (
    <table className="plain-table" data-testid="triggers">
      <thead>
        <tr>
          <th>Trigger</th>
          {operator && <th>Tenant</th>}
          <th>Subject</th>
          <th>Agent</th>
          <th>Since</th>
          {commands && <th>Actions</th>}
        </tr>
      </thead>
      <tbody>
        {list.map(({ spec, createdAt }) => (
          <tr key={spec.id} data-trigger-id={spec.id}>
            <td className="mono">{spec.id}</td>
            {operator && <td>{spec.tenant}</td>}
            <td className="mono">{spec.subject}</td>
            <td>{agentLabel(spec.request.agent)}</td>
            <td>{fullTime(new Date(createdAt).toISOString())}</td>
            {commands && (
              <td className="row-actions">
                <ConfirmButton label="Delete" onConfirm={() => commands.deleteTrigger.mutate(spec.id)} />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Creates an event trigger: each message on its subject starts a run of the agent, with the message as input. */
export function TriggerForm({
  commands,
  onProblem,
}: {
  commands: ScheduleCommands;
  onProblem: (message: string) => void;
}) {
  const [id, setId] = useState('');
  const [subject, setSubject] = useState('dura.event.');
  const [agent, setAgent] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!subject.startsWith('dura.event.') || subject.length <= 'dura.event.'.length) {
      onProblem('The subject is under "dura.event.", e.g. dura.event.orders.> or dura.event.orders.created');
      return;
    }
    const reset = () => {
      setId('');
      setSubject('dura.event.');
      setAgent('');
    };
    commands.createTrigger.mutate(
      {
        id: id.trim(),
        subject: subject.trim(),
        request: { v: 1, agent: { kind: 'agent', name: agent.trim() } },
      },
      { onSuccess: reset },
    );
  };
  return (
    <form className="entity-form" onSubmit={submit} aria-label="Create an event trigger">
      <Field label="Trigger id" placeholder="id, e.g. orders" value={id} onChange={setId} />
      <Field
        label="Trigger subject"
        placeholder="dura.event.orders.>"
        value={subject}
        onChange={setSubject}
        wide
      />
      <Field label="Trigger agent" placeholder="agent name" value={agent} onChange={setAgent} />
      <button type="submit" disabled={id.trim() === '' || agent.trim() === ''}>
        Create trigger
      </button>
    </form>
  );
}
