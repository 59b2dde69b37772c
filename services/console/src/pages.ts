// Each page's code, loaded when the console is on that page (main.ts starts the load of the page it opens on,
// beside the app's): a run's page does not compile the run list's, the catalogue's or the schedules' code.
import type { Route } from './model/router';

const loaders = {
  runs: () => import('./components/RunList').then((m) => m.RunList),
  run: () => import('./components/RunPage').then((m) => m.RunPage),
  agents: () => import('./components/CataloguePage').then((m) => m.CataloguePage),
  schedules: () => import('./components/SchedulesPage').then((m) => m.SchedulesPage),
  limits: () => import('./components/LimitsPage').then((m) => m.LimitsPage),
} satisfies Record<Route['page'], unknown>;

export type PageName = keyof typeof loaders;
export type PageComponents = { [K in PageName]: Awaited<ReturnType<(typeof loaders)[K]>> };

const loaded: Partial<PageComponents> = {};

/** Loads the code of `page`; once in, `loadedPage` gives it at once. */
export function loadPage<K extends PageName>(page: K): Promise<PageComponents[K]> {
  return (loaders[page]() as Promise<PageComponents[K]>).then((component) => (loaded[page] = component));
}

/** The component of `page` if its code is in (no render waits a tick for code that is already there). */
export const loadedPage = <K extends PageName>(page: K): PageComponents[K] | undefined => loaded[page];
