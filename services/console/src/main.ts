// The page's first script: small (no React, no schema), so what a run's page reads first starts at once.
import { fetchAhead } from './api/fetch-ahead';
import { startRunReader } from './api/run-reader-start';
import { routeOf } from './model/router';
import { loadPage } from './pages';
import './styles.css';

// Every page shows the caller's session first.
fetchAhead('/console/session');
// Opened on a run: its events are the first long read, so their reader starts with the page, and its state
// and first events are fetched and validated while the app's bundle loads and starts.
const route = routeOf(location.pathname, location.search);
if (route.page === 'run') startRunReader(route.runId);

// The app, and the code of the page it opens on, load side by side.
void import('./app');
void loadPage(route.page);
