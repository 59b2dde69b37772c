import { useState } from 'react';
import type { JsonValue } from '@dura/contracts';
import { jsonField } from '../model/json-field';
import { EntityForm, type CommandFormProps } from './EntityForm';
import { Field } from './Field';

/** Publishes an event on a subject under `dura.event.`: each trigger reading it starts a run with the payload. */
export function EventForm({ commands, onProblem }: CommandFormProps) {
  const [subject, setSubject] = useState('dura.event.');
  const [payload, setPayload] = useState('');
  const [id, setId] = useState('');
  const send = () => {
    const parsed = jsonField(payload, 'The payload');
    if (parsed === undefined)
      throw new Error('The payload is the input of the runs it starts: give some JSON');
    commands.sendEvent.mutate({
      subject: subject.trim(),
      payload: parsed as JsonValue,
      ...(id.trim() ? { id: id.trim() } : {}),
    });
  };
  return (
    <section aria-label="Send an event">
      <h2>Send an event</h2>
      <EntityForm
        label="Send event"
        action="Send event"
        ready={subject.trim() !== ''}
        send={send}
        onProblem={onProblem}
      >
        <Field
          label="Event subject"
          placeholder="dura.event.orders.created"
          value={subject}
          onChange={setSubject}
          wide
        />
        <Field
          label="Event payload (JSON)"
          placeholder='payload, e.g. {"order": 42}'
          value={payload}
          onChange={setPayload}
          wide
        />
        <Field
          label="Event id (optional)"
          placeholder="id (optional): the same id is sent once"
          value={id}
          onChange={setId}
        />
      </EntityForm>
    </section>
  );
}
