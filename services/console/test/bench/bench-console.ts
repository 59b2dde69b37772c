// `npm run bench:console` (test/bench: it uses the test harness to start its private servers): how the console holds up at size, in Debian's Chromium against the real projector
// (its HTTP API, read model and console files) over a private nats-server and Postgres database.
// - A run of 10,000+ events, appended to the log and projected: time to open its page (header, time axis,
//   first screen of rows and event count shown, first row clickable) and to read all its events, the
//   renderer's busy time for each, rows in the DOM (virtualized), and frame times while its timeline scrolls.
// - 100,000 runs in the read model: time to first rows, keyset pages while scrolling, and API latencies of
//   the list's first page, a deep page, and filtered pages.
// Prints one JSON object (and writes it to bench-results/console.json).
//   npm run bench:console [-- --runs 100000 --events 10000] [--profile: where the open's time goes, bench-profile.ts]
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type CDPSession, type Page } from 'playwright-core';
import { runSubject, type NewEvent } from '@dura/contracts';
import { openDatabase } from '@dura/db';
import { createEventStore, ensureStreams } from '@dura/event-store';
import { createProjector, migrateProjector, projectorRoutes } from '@dura/projector';
import { connectNats, createLogger, startHttpServer } from '@dura/service-kit';
import { createTestDatabase, repoRoot, startNatsServer } from '@dura/testing';
import { bigRunEvents, seedRunsSql } from './bench-data';
import { startProfile } from './bench-profile';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100000' },
    events: { type: 'string', default: '10000' },
    profile: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const EVENTS = Number(values.events);
const BIG_RUN = 'bench-big-run';
const CHROMIUM = process.env['DURA_CHROMIUM'] ?? '/usr/bin/chromium';
const log = createLogger({ service: 'bench-console', level: 'warn', format: 'pretty' });

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const round = (n: number) => Math.round(n * 10) / 10;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

/** Median and p95 of `n` sequential GETs of `url`. */
async function latency(url: string, n = 20): Promise<{ p50Ms: number; p95Ms: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i += 1) times.push((await timed(() => fetch(url).then((r) => r.arrayBuffer())))[1]);
  return { p50Ms: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)) };
}

/** Scrolls `selector` from top to bottom in `steps` frames; the frame-to-frame times the page saw. */
/** The renderer's main-thread busy time so far (CDP `Performance.getMetrics` TaskDuration), in ms. */
async function busyMs(cdp: CDPSession): Promise<number> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
}

/**
 * Frame times while `selector` scrolls top to bottom in `steps` jumps, and the main thread's busy time per
 * frame: the work a frame costs, which a loaded machine stretches less than the wall-clock frame time.
 */
async function scrollFrames(page: Page, selector: string, steps: number) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const busyBefore = await busyMs(cdp);
  const frames = await page.evaluate(
    async ({ selector, steps }) => {
      const el = document.querySelector(selector) as HTMLElement;
      const times: number[] = [];
      let last = performance.now();
      for (let i = 1; i <= steps; i += 1) {
        el.scrollTop = ((el.scrollHeight - el.clientHeight) * i) / steps;
        await new Promise((resolve) => requestAnimationFrame(resolve));
        const now = performance.now();
        times.push(now - last);
        last = now;
      }
      return times;
    },
    { selector, steps },
  );
  const busy = (await busyMs(cdp)) - busyBefore;
  await cdp.detach();
  return {
    busyMsPerFrame: round(busy / frames.length),
    frames: frames.length,
    p50FrameMs: round(percentile(frames, 50)),
    p95FrameMs: round(percentile(frames, 95)),
    maxFrameMs: round(Math.max(...frames)),
    framesOver50Ms: frames.filter((t) => t > 50).length,
  };
}

async function main(): Promise<void> {
  const nats = await startNatsServer();
  const database = await createTestDatabase({ prefix: 'bench_console' });
  const handles = await openDatabase({ url: database.url });
  const conn = await connectNats(nats.url, 'bench-console');
  const projector = createProjector({
    ...conn,
    db: handles.db,
    log,
    streams: { replicas: 1, duplicateWindowMs: 120_000, storage: 'file' },
  });
  const http = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    log,
    routes: projectorRoutes({ ...conn, db: handles.db, position: projector.position, log }),
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    await migrateProjector(handles);
    await ensureStreams(conn.jsm, { replicas: 1, duplicateWindowMs: 120_000, storage: 'file' });
    await projector.start();

    // The big run goes through the log and the projector like any run.
    const store = createEventStore(conn);
    const events: NewEvent[] = bigRunEvents(BIG_RUN, EVENTS);
    const [, appendMs] = await timed(async () => {
      for (let i = 0; i < events.length; i += 200)
        await store.append(BIG_RUN, events.slice(i, i + 200), { expectedSeq: 'any' });
    });
    const last = await conn.jsm.streams.getMessage('DURA_RUNS', { last_by_subj: runSubject(BIG_RUN) });
    const [, projectMs] = await timed(async () => {
      while (projector.position() < (last?.seq ?? 0)) await new Promise((r) => setTimeout(r, 100));
    });
    // The many runs are written to the read model directly: the list reads only it, and folding 100k logs
    // would measure the projector, not the console.
    const [, seedMs] = await timed(() => handles.db.execute(seedRunsSql(RUNS)));
    await handles.db.execute('analyze runs');

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // The list with 100k runs: first rows, then scrolling loads keyset pages.
    const [, listFirstRowsMs] = await timed(async () => {
      await page.goto(`${http.url}/ui/`);
      await page.locator('[data-run-id]').first().waitFor({ timeout: 60_000 });
    });
    const pagesLoaded: number[] = [];
    for (let i = 1; i <= 5; i += 1) {
      const [, ms] = await timed(async () => {
        await page.evaluate(() => {
          const el = document.querySelector('[data-testid="run-list"]') as HTMLElement;
          el.scrollTop = el.scrollHeight;
        });
        await page.getByText(`${(i + 1) * 100} runs loaded`).waitFor({ timeout: 60_000 });
      });
      pagesLoaded.push(ms);
    }
    const listScroll = await scrollFrames(page, '[data-testid="run-list"]', 120);
    const listDomRows = await page.locator('[data-run-id]').count();

    const api = `${http.url}/runs?limit=100`;
    const firstPage = (await (await fetch(api)).json()) as { nextCursor?: string };
    let cursor = firstPage.nextCursor;
    for (let i = 0; i < 200 && cursor; i += 1)
      cursor = (
        (await (await fetch(`${api}&cursor=${encodeURIComponent(cursor)}`)).json()) as { nextCursor?: string }
      ).nextCursor;
    const apiLatency = {
      firstPage: await latency(api),
      pageAfter20000Runs: cursor ? await latency(`${api}&cursor=${encodeURIComponent(cursor)}`) : null,
      statusWaiting: await latency(`${api}&status=waiting`),
      rareTag: await latency(`${api}&tag=rare`),
      metadata: await latency(`${api}&meta=team:pay`),
      idPrefix: await latency(`${api}&idPrefix=bench-run-0001`),
    };

    // The run of 10k events. Open: its header (status) and time axis, its first screen of rows and its event
    // count are shown, and a click on its first row shows that event (the page answers). Then every event
    // read (the page reads the rest behind its first screen); then count DOM rows, scroll the whole timeline.
    const openCdp = await page.context().newCDPSession(page);
    await openCdp.send('Performance.enable');
    const busyBeforeOpen = await busyMs(openCdp);
    const out = join(repoRoot(), 'bench-results');
    await mkdir(out, { recursive: true });
    const profiling = values.profile ? await startProfile(browser, page, out) : undefined;
    const openStart = performance.now();
    await page.goto(`${http.url}/ui/runs/${BIG_RUN}`);
    // Checked in the page on every frame (one check, not one round trip to the page per condition).
    await page.waitForFunction(
      (count) => {
        const timeline = document.querySelector('[data-testid="timeline"]');
        if (!timeline || !document.querySelector('.run-head [data-status="completed"]')) return false;
        if (!document.querySelector('[data-testid="time-axis"]')) return false;
        // The last row the timeline's view holds whole (rows are 30 px tall).
        const inView = Math.max(1, Math.floor(timeline.clientHeight / 30));
        const counted = document.querySelector('[data-testid="event-count"]')?.textContent ?? '';
        return timeline.querySelector(`[data-n="${inView}"]`) !== null && counted.includes(String(count));
      },
      events.length,
      { timeout: 120_000, polling: 'raf' },
    );
    await page.locator('[data-testid="timeline"] [data-n="1"]').click();
    await page.getByTestId('event-detail').getByRole('heading', { name: '#1 run_requested' }).waitFor();
    const runOpenMs = performance.now() - openStart;
    const openProfile = await profiling?.stop();
    // The renderer's busy time counts from its document's start: a navigation starts it again.
    const openBusy = await busyMs(openCdp);
    const runOpenBusyMs = openBusy >= busyBeforeOpen ? openBusy - busyBeforeOpen : openBusy;
    await page
      .locator('[data-testid="event-count"][data-complete="true"]')
      .getByText(`${events.length} events`)
      .waitFor({ timeout: 120_000 });
    const allEventsMs = performance.now() - openStart;
    const allBusy = await busyMs(openCdp);
    const allEventsBusyMs = allBusy >= busyBeforeOpen ? allBusy - busyBeforeOpen : allBusy;
    await openCdp.detach();
    const runDomRows = await page.locator('[data-seq]').count();
    const runScroll = await scrollFrames(page, '[data-testid="timeline"]', 240);
    const [, timeTravelMs] = await timed(async () => {
      await page.getByTestId('step-picker').fill(String(events.length));
      await page.getByTestId('tt-status').getByText('status: completed').waitFor({ timeout: 60_000 });
    });

    const result = {
      bench: 'console',
      chromium: browser.version(),
      bigRun: {
        events: events.length,
        appendMs: Math.round(appendMs),
        projectMs: Math.round(projectMs),
        openPageMs: Math.round(runOpenMs),
        openBusyMs: Math.round(runOpenBusyMs),
        allEventsMs: Math.round(allEventsMs),
        allEventsBusyMs: Math.round(allEventsBusyMs),
        loadAverage: loadavg().map((n) => round(n)),
        domRows: runDomRows,
        scroll: runScroll,
        timeTravelToEndMs: Math.round(timeTravelMs),
      },
      runList: {
        runs: RUNS,
        seedMs: Math.round(seedMs),
        firstRowsMs: Math.round(listFirstRowsMs),
        nextPageMs: pagesLoaded.map(Math.round),
        domRows: listDomRows,
        scroll: listScroll,
        apiLatency,
      },
      ...(openProfile ? { openProfile } : {}),
    };
    await writeFile(join(out, 'console.json'), JSON.stringify(result, null, 2));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await browser.close();
    await http.close();
    await projector.stop();
    await conn.nc.drain();
    await handles.close();
    await database.drop();
    await nats[Symbol.asyncDispose]();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `bench:console failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
