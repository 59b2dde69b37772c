import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/http';
import { tokenStore } from '../api/token';
import { useSession } from '../api/queries';
import { agentsPath, limitsPath, schedulesPath } from '../model/router';
import { useRoute } from '../model/use-route';
import { loadedPage, loadPage, type PageComponents, type PageName } from '../pages';
import { Link } from './Link';
import { ThemeToggle } from './ThemeToggle';

export function App() {
  const session = useSession();
  const route = useRoute();
  const client = useQueryClient();
  const signOut = () => {
    tokenStore.clear();
    client.clear();
    void session.refetch();
  };
  const needsToken = session.error instanceof ApiError && session.error.status === 401;
  // From the run list, the next page is most often a run's: its code is loaded once the list is idle.
  const onList = route.page === 'runs' && session.data !== undefined;
  useEffect(() => {
    if (!onList) return;
    const idle = requestIdleCallback(() => void loadPage('run'), { timeout: 2000 });
    return () => cancelIdleCallback(idle);
  }, [onList]);
  return (
    <div className="app">
      <header className="topbar">
        <Link to="/ui/" className="brand">
          Dura Console
        </Link>
        <nav className="nav" aria-label="Pages">
          <Link to="/ui/">Runs</Link>
          <Link to={agentsPath()}>Agents and tools</Link>
          <Link to={schedulesPath}>Schedules &amp; triggers</Link>
          <Link to={limitsPath}>Limits</Link>
        </nav>
        <span className="spacer" />
        {session.data && (
          <span className="who" data-testid="session">
            {session.data.name} · tenant {session.data.tenant} ·{' '}
            {session.data.scopes.join(', ') || 'no scopes'}
          </span>
        )}
        {tokenStore.get() && (
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        )}
        <ThemeToggle />
      </header>
      <main>
        {needsToken && <SignIn onDone={() => void session.refetch()} />}
        {session.error && !needsToken && <p className="error">{session.error.message}</p>}
        {session.data &&
          (route.page === 'agents' ? (
            <Page page="agents">{(CataloguePage) => <CataloguePage session={session.data} />}</Page>
          ) : route.page === 'run' ? (
            <Page page="run">
              {(RunPage) => <RunPage key={route.runId} runId={route.runId} session={session.data} />}
            </Page>
          ) : route.page === 'schedules' ? (
            <Page page="schedules">{(SchedulesPage) => <SchedulesPage session={session.data} />}</Page>
          ) : route.page === 'limits' ? (
            <Page page="limits">{(LimitsPage) => <LimitsPage />}</Page>
          ) : (
            <Page page="runs">{(RunList) => <RunList search={route.search} session={session.data} />}</Page>
          ))}
      </main>
    </div>
  );
}

/** Draws `page` with its component once its code is in (at once when it already is). */
function Page<K extends PageName>({
  page,
  children,
}: {
  page: K;
  children: (component: PageComponents[K]) => ReactNode;
}) {
  const component = loadedPage(page);
  const [, loaded] = useState(0);
  useEffect(() => {
    if (!component) void loadPage(page).then(() => loaded((n) => n + 1));
  }, [page, component]);
  return component ? children(component) : null;
}

function SignIn({ onDone }: { onDone: () => void }) {
  const [token, setToken] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    tokenStore.set(token.trim());
    onDone();
  };
  return (
    <form className="signin" onSubmit={submit}>
      <h1>Sign in</h1>
      <p>
        This API needs a bearer token (the same tokens as the CLI&apos;s DURA_API_TOKEN). It is kept for this
        tab only.
      </p>
      <label>
        API token
        <input
          type="password"
          autoFocus
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-label="API token"
        />
      </label>
      <button type="submit" disabled={token.trim() === ''}>
        Sign in
      </button>
    </form>
  );
}
