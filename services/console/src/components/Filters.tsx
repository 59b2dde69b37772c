import { useState, type FormEvent } from 'react';
import { RUN_STATUSES } from '@dura/contracts';
import { NO_FILTERS, type RunFilters, type RunStatus } from '../model/filters';

const TEXT_FIELDS: {
  field: Exclude<keyof RunFilters, 'status'>;
  label: string;
  placeholder: string;
  type?: string;
}[] = [
  { field: 'idPrefix', label: 'Id starts with', placeholder: 'run id prefix' },
  { field: 'agent', label: 'Agent', placeholder: 'cashier' },
  { field: 'agentVersion', label: 'Version', placeholder: '1' },
  { field: 'tag', label: 'Tag', placeholder: 'nightly' },
  { field: 'tool', label: 'Tool', placeholder: 'http.request' },
  { field: 'meta', label: 'Metadata', placeholder: 'customer:acme' },
  { field: 'createdAfter', label: 'Created after', placeholder: '', type: 'datetime-local' },
  { field: 'createdBefore', label: 'Created before', placeholder: '', type: 'datetime-local' },
];

/** The run list's filters; applied on submit (Enter), so typing does not query on every key. */
export function Filters({
  value,
  onChange,
  operator,
}: {
  value: RunFilters;
  onChange: (next: RunFilters) => void;
  operator: boolean;
}) {
  const [draft, setDraft] = useState(value);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onChange(draft);
  };
  const toggle = (status: RunStatus) =>
    setDraft((d) => ({
      ...d,
      status: d.status.includes(status) ? d.status.filter((s) => s !== status) : [...d.status, status],
    }));
  const fields = operator
    ? [...TEXT_FIELDS, { field: 'tenant' as const, label: 'Tenant', placeholder: 'acme' }]
    : TEXT_FIELDS;
  return (
    <form className="filters" onSubmit={submit} aria-label="Filters">
      <fieldset className="statuses">
        <legend>Status</legend>
        {RUN_STATUSES.map((status) => (
          <label key={status}>
            <input type="checkbox" checked={draft.status.includes(status)} onChange={() => toggle(status)} />
            {status}
          </label>
        ))}
      </fieldset>
      {fields.map(({ field, label, placeholder, type }) => (
        <label key={field}>
          {label}
          <input
            name={field}
            type={type ?? 'text'}
            placeholder={placeholder}
            value={draft[field]}
            onChange={(e) => setDraft((d) => ({ ...d, [field]: e.target.value }))}
          />
        </label>
      ))}
      <div className="filter-actions">
        <button type="submit">Apply</button>
        <button
          type="button"
          onClick={() => {
            setDraft(NO_FILTERS);
            onChange(NO_FILTERS);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
