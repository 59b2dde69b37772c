import { useState } from 'react';
import { jsonField } from '../model/json-field';
import { EntityForm, type CommandFormProps } from './EntityForm';
import { Field } from './Field';

/** Creates a schedule that starts a registered agent on a cron expression or a fixed interval. */
export function ScheduleForm({ commands, onProblem }: CommandFormProps) {
  const [id, setId] = useState('');
  const [agent, setAgent] = useState('');
  const [timing, setTiming] = useState<'cron' | 'every'>('cron');
  const [when, setWhen] = useState('');
  const [timeZone, setTimeZone] = useState('');
  const [input, setInput] = useState('');
  const send = () => {
    const parsed = jsonField(input, 'The input');
    const seconds = Number(when);
    if (timing === 'every' && !(Number.isInteger(seconds) && seconds >= 1))
      throw new Error('The interval is a whole number of seconds, at least 1');
    const reset = () => {
      for (const clear of [setId, setAgent, setWhen, setTimeZone, setInput]) clear('');
    };
    commands.createSchedule.mutate(
      {
        id: id.trim(),
        ...(timing === 'cron'
          ? { cron: when.trim(), ...(timeZone.trim() ? { timeZone: timeZone.trim() } : {}) }
          : { everyMs: seconds * 1000 }),
        request: {
          v: 1,
          agent: { kind: 'agent', name: agent.trim() },
          ...(parsed === undefined ? {} : { input: parsed }),
        },
      },
      { onSuccess: reset },
    );
  };
  return (
    <EntityForm
      label="Create a schedule"
      action="Create schedule"
      ready={id.trim() !== '' && agent.trim() !== '' && when.trim() !== ''}
      send={send}
      onProblem={onProblem}
    >
      <Field label="Schedule id" placeholder="id, e.g. nightly_report" value={id} onChange={setId} />
      <Field label="Schedule agent" placeholder="agent name" value={agent} onChange={setAgent} />
      <select
        aria-label="Timing"
        value={timing}
        onChange={(e) => setTiming(e.target.value as 'cron' | 'every')}
      >
        <option value="cron">cron</option>
        <option value="every">every (seconds)</option>
      </select>
      <Field
        label={timing === 'cron' ? 'Cron expression' : 'Interval in seconds'}
        placeholder={timing === 'cron' ? '30 2 * * *' : '3600'}
        value={when}
        onChange={setWhen}
      />
      {timing === 'cron' && (
        <Field
          label="Time zone"
          placeholder="time zone (default UTC)"
          value={timeZone}
          onChange={setTimeZone}
        />
      )}
      <Field
        label="Schedule input (JSON)"
        placeholder='input, e.g. {"report": "daily"}'
        value={input}
        onChange={setInput}
        wide
      />
    </EntityForm>
  );
}
