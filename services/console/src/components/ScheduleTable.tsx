import type { ScheduleView } from '@dura/contracts';
import { useSchedules, type ScheduleCommands } from '../api/schedules';
import { fullTime, shortDuration } from '../model/format';
import { agentLabel } from '../model/json-field';
import { runPath } from '../model/router';
import { ConfirmButton } from './ConfirmButton';
import { Link } from './Link';
import { ListTable } from './PlainTable';

/** How many of a schedule's latest runs the table links to. */
const RECENT_RUNS = 3;

/** The schedules, each with its timing, next tick and latest runs; with `commands`, its actions. */
export function ScheduleTable({ commands, operator }: { commands?: ScheduleCommands; operator: boolean }) {
  const schedules = useSchedules();
  const list = schedules.data?.schedules ?? [];
  return (
    <ListTable
      read={schedules}
      count={list.length}
      empty="No schedules yet."
      testId="schedules"
      columns={[
        'Schedule',
        operator && 'Tenant',
        'When',
        'Agent',
        'Next tick',
        'Recent runs',
        commands && 'Actions',
      ]}
    >
      {list.map((schedule) => (
        <ScheduleRow key={schedule.spec.id} schedule={schedule} operator={operator} commands={commands} />
      ))}
    </ListTable>
  );
}

function ScheduleRow({
  schedule,
  operator,
  commands,
}: {
  schedule: ScheduleView;
  operator: boolean;
  commands: ScheduleCommands | undefined;
}) {
  const { spec, paused, next, history } = schedule;
  const runs = history.filter((tick) => tick.runId !== '').slice(-RECENT_RUNS);
  return (
    <tr data-schedule-id={spec.id} data-paused={String(paused)}>
      <td className="mono">{spec.id}</td>
      {operator && <td>{spec.tenant}</td>}
      <td>
        {spec.cron !== undefined
          ? `cron ${spec.cron}${spec.timeZone ? ` (${spec.timeZone})` : ''}`
          : `every ${shortDuration(spec.everyMs ?? 0)}`}
      </td>
      <td>{agentLabel(spec.request.agent)}</td>
      <td data-testid="next-tick">
        {paused ? <span className="badge">paused</span> : fullTime(next[0] ?? '')}
      </td>
      <td>
        {runs.length === 0 && <span className="muted">none yet</span>}
        {runs.map((tick) => (
          <div key={tick.runId} className="mono">
            <Link to={runPath(tick.runId)}>{tick.runId}</Link> <span className="muted">{tick.action}</span>
          </div>
        ))}
      </td>
      {commands && (
        <td className="row-actions">
          <button type="button" onClick={() => commands.setPaused.mutate({ id: spec.id, paused: !paused })}>
            {paused ? 'Resume' : 'Pause'}
          </button>
          <button type="button" onClick={() => commands.triggerNow.mutate(spec.id)}>
            Trigger now
          </button>
          <ConfirmButton label="Delete" onConfirm={() => commands.deleteSchedule.mutate(spec.id)} />
        </td>
      )}
    </tr>
  );
}
