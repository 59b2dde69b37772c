import { useState } from 'react';
import { useTriggers, type ScheduleCommands } from '../api/schedules';
import { fullTime } from '../model/format';
import { agentLabel } from '../model/json-field';
import { ConfirmButton } from './ConfirmButton';
import { EntityForm, type CommandFormProps } from './EntityForm';
import { Field } from './Field';
import { ListTable } from './PlainTable';

/** The event triggers: the subject each reads and the agent it starts; with `commands`, delete. */
export function TriggerTable({ commands, operator }: { commands?: ScheduleCommands; operator: boolean }) {
  const triggers = useTriggers();
  const list = triggers.data?.triggers ?? [];
  return (
    <ListTable
      read={triggers}
      count={list.length}
      empty="No event triggers yet."
      testId="triggers"
      columns={['Trigger', operator && 'Tenant', 'Subject', 'Agent', 'Since', commands && 'Actions']}
    >
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
    </ListTable>
  );
}

/** Creates an event trigger: each message on its subject starts a run of the agent, with the message as input. */
export function TriggerForm({ commands, onProblem }: CommandFormProps) {
  const [id, setId] = useState('');
  const [subject, setSubject] = useState('dura.event.');
  const [agent, setAgent] = useState('');
  const send = () => {
    if (!subject.startsWith('dura.event.') || subject.length <= 'dura.event.'.length)
      throw new Error(
        'The subject is under "dura.event.", e.g. dura.event.orders.> or dura.event.orders.created',
      );
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
    <EntityForm
      label="Create an event trigger"
      action="Create trigger"
      ready={id.trim() !== '' && agent.trim() !== ''}
      send={send}
      onProblem={onProblem}
    >
      <Field label="Trigger id" placeholder="id, e.g. orders" value={id} onChange={setId} />
      <Field
        label="Trigger subject"
        placeholder="dura.event.orders.>"
        value={subject}
        onChange={setSubject}
        wide
      />
      <Field label="Trigger agent" placeholder="agent name" value={agent} onChange={setAgent} />
    </EntityForm>
  );
}
