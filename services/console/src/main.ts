// The page's first script: small (no React, no schema), so what a run's page reads first starts at once.
import { fetchAhead } from './api/fetch-ahead';
import { startRunReader } from './api/run-reader-start';
import { routeOf } from './model/router';
import { loadPage } from './pages';
// Every page has all the styles from its start, whichever page's code it loads (the top bar's links are styled
// in catalogue.css and schedules.css), in the order they always had: styles.css last.
import './components/catalogue.css';
import './components/conversation.css';
import './schedules.css';
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
