import type { FormEvent, ReactNode } from 'react';
import type { ScheduleCommands } from '../api/schedules';

/** What a form of the schedules page is given: the commands it sends, and where a problem with its fields goes. */
export interface CommandFormProps {
  commands: ScheduleCommands;
  onProblem: (message: string) => void;
}

/**
 * A form of the schedules page: on submit, `send` reads the fields and sends its command; a field it cannot
 * read throws, and the message goes to `onProblem`. The submit button, `action`, waits until `ready`.
 */
export function EntityForm({
  label,
  action,
  ready,
  send,
  onProblem,
  children,
}: {
  label: string;
  action: string;
  ready: boolean;
  send: () => void;
  onProblem: (message: string) => void;
  children: ReactNode;
}) {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      send();
    } catch (err) {
      onProblem((err as Error).message);
    }
  };
  return (
    <form className="entity-form" onSubmit={submit} aria-label={label}>
      {children}
      <button type="submit" disabled={!ready}>
        {action}
      </button>
    </form>
  );
}
