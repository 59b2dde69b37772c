/** Where the console is: the run list (with its filters in the query), one run, the agents and tools, or schedules and triggers. */
export type Route =
  | { page: 'runs'; search: string }
  | { page: 'run'; runId: string }
  | { page: 'agents' }
  | { page: 'schedules' }
  | { page: 'limits' };

const BASE = '/ui/';

export function routeOf(pathname: string, search: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : '';
  const match = /^runs\/([^/]+)\/?$/.exec(rest);
  if (match?.[1]) return { page: 'run', runId: decodeURIComponent(match[1]) };
  if (/^schedules\/?$/.test(rest)) return { page: 'schedules' };
  if (/^agents\/?$/.test(rest)) return { page: 'agents' };
  if (/^limits\/?$/.test(rest)) return { page: 'limits' };
  return { page: 'runs', search };
}

export const runPath = (runId: string) => `${BASE}runs/${encodeURIComponent(runId)}`;
export const listPath = (search = '') => `${BASE}${search}`;
export const schedulesPath = `${BASE}schedules`;
export const agentsPath = () => `${BASE}agents`;
export const limitsPath = `${BASE}limits`;

/** Moves to `path` without a reload. */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}
