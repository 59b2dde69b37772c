import { useState, type FormEvent } from 'react';
import type { JsonValue } from '@dura/contracts';
import type { ScheduleCommands } from '../api/schedules';
import { Field } from './Field';
import { jsonField } from '../model/json-field';

/** Publishes an event on a subject under `dura.event.`: each trigger reading it starts a run with the payload. */
export function EventForm({
  commands,
  onProblem,
}: {
  commands: ScheduleCommands;
  onProblem: (message: string) => void;
}) {
  const [subject, setSubject] = useState('dura.event.');
  const [payload, setPayload] = useState('');
  const [id, setId] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      const parsed = jsonField(payload, 'The payload');
      if (parsed === undefined)
        throw new Error('The payload is the input of the runs it starts: give some JSON');
      commands.sendEvent.mutate({
        subject: subject.trim(),
        payload: parsed as JsonValue,
        ...(id.trim() ? { id: id.trim() } : {}),
      });
    } catch (err) {
      onProblem((err as Error).message);
    }
  };
  return (
    <section aria-label="Send an event">
      <h2>Send an event</h2>
      <form className="entity-form" onSubmit={submit} aria-label="Send event">
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
        <button type="submit" disabled={subject.trim() === ''}>
          Send event
        </button>
      </form>
    </section>
  );
}
