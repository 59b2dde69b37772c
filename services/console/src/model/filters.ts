import { RUN_STATUSES } from '@dura/contracts';

export type RunStatus = (typeof RUN_STATUSES)[number];

/** What the run list is filtered by; each maps to a `GET /runs` query parameter. */
export interface RunFilters {
  status: RunStatus[];
  agent: string;
  agentVersion: string;
  tag: string;
  tool: string;
  tenant: string;
  /** `key:value` pairs, comma-separated. */
  meta: string;
  idPrefix: string;
  createdAfter: string;
  createdBefore: string;
}

export const NO_FILTERS: RunFilters = {
  status: [],
  agent: '',
  agentVersion: '',
  tag: '',
  tool: '',
  tenant: '',
  meta: '',
  idPrefix: '',
  createdAfter: '',
  createdBefore: '',
};

/** The query string of one page of `GET /runs` (a `datetime-local` value is read as the browser's time). */
export function listQueryString(filters: RunFilters, cursor: string | undefined, limit = 100): string {
  const query = new URLSearchParams({ limit: String(limit) });
  if (filters.status.length > 0) query.set('status', filters.status.join(','));
  const text: [keyof RunFilters, string][] = [
    ['agent', 'agent'],
    ['agentVersion', 'agentVersion'],
    ['tag', 'tag'],
    ['tool', 'tool'],
    ['tenant', 'tenant'],
    ['idPrefix', 'idPrefix'],
  ];
  for (const [field, name] of text) {
    const value = String(filters[field]).trim();
    if (value !== '') query.set(name, value);
  }
  for (const pair of filters.meta.split(',')) if (pair.trim() !== '') query.append('meta', pair.trim());
  for (const name of ['createdAfter', 'createdBefore'] as const) {
    const value = filters[name].trim();
    if (value !== '') query.set(name, new Date(value).toISOString());
  }
  if (cursor !== undefined) query.set('cursor', cursor);
  return query.toString();
}

/** Filters from the page's address (`?status=waiting&agent=cashier`), so a filtered list can be linked. */
export function filtersFromSearch(search: string): RunFilters {
  const query = new URLSearchParams(search);
  const status = (query.get('status') ?? '')
    .split(',')
    .filter((s): s is RunStatus => (RUN_STATUSES as readonly string[]).includes(s));
  const get = (name: keyof RunFilters) => query.get(name) ?? '';
  return {
    status,
    agent: get('agent'),
    agentVersion: get('agentVersion'),
    tag: get('tag'),
    tool: get('tool'),
    tenant: get('tenant'),
    meta: get('meta'),
    idPrefix: get('idPrefix'),
    createdAfter: get('createdAfter'),
    createdBefore: get('createdBefore'),
  };
}
