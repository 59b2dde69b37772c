import { useEffect, useState } from 'react';
import type { ConsoleSession } from '@dura/contracts';
import { useScheduleCommands } from '../api/schedules';
import { pageTitle } from '../model/format';
import { EventForm } from './EventForm';
import { ScheduleForm } from './ScheduleForm';
import { ScheduleTable } from './ScheduleTable';
import { TriggerForm, TriggerTable } from './Triggers';

/**
 * `/ui/schedules`: the schedules and event triggers the token may see, and what it may do to them. Creating,
 * pausing, resuming, triggering and deleting need scope `schedule`; sending an event needs `submit` (it may
 * start runs). Each action shows only when the token has its scope (the API checks again).
 */
export function SchedulesPage({ session }: { session: ConsoleSession }) {
  const [message, setMessage] = useState<string>();
  const commands = useScheduleCommands(setMessage);
  const manage = session.scopes.includes('schedule');
  const operator = session.tenant === '*';
  useEffect(() => {
    document.title = pageTitle('Schedules & triggers');
  }, []);
  return (
    <section className="schedules-page" aria-label="Schedules and triggers">
      <h1>Schedules &amp; triggers</h1>
      {message && (
        <p className="notice" role="status" data-testid="schedules-message">
          {message}
        </p>
      )}
      <h2>Schedules</h2>
      <ScheduleTable commands={manage ? commands : undefined} operator={operator} />
      {manage && <ScheduleForm commands={commands} onProblem={setMessage} />}
      <h2>Event triggers</h2>
      <TriggerTable commands={manage ? commands : undefined} operator={operator} />
      {manage && <TriggerForm commands={commands} onProblem={setMessage} />}
      {session.scopes.includes('submit') && <EventForm commands={commands} onProblem={setMessage} />}
    </section>
  );
}
