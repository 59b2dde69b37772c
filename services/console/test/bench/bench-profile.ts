// `npm run bench:console -- --profile`: where the renderer's time goes while the run page opens. A CPU profile
// of the page's main thread (self time by function) and a Chromium trace (time by trace event on the main
// thread and the worker, script compile and evaluation by file). Profiling slows the page: its figures say
// where the time goes, not how long the open takes (the bench's own figures, without --profile, do).
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Browser, CDPSession, Page } from 'playwright-core';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}
interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string; data?: { url?: string; functionName?: string } };
}

const ms = (us: number) => Math.round(us / 100) / 10;
const top = (totals: Map<string, number>, n: number) =>
  [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, ms: ms(us) }));
const add = (totals: Map<string, number>, key: string, us: number) =>
  totals.set(key, (totals.get(key) ?? 0) + us);

/** Self time by function (name, file and line) until `end` (µs, the trace's clock), from a V8 CPU profile. */
export function selfTimes(profile: CpuProfile, end = Infinity, n = 30) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (!frame || at > end) return;
    const where = frame.url ? ` ${basename(frame.url)}:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : '';
    add(totals, `${frame.functionName || '(anonymous)'}${where}`, profile.timeDeltas[i + 1] ?? 0);
  });
  totals.delete('(idle)');
  return top(totals, n);
}

/**
 * Time by trace event on the renderer's main thread and its workers, and compile/evaluate time by script, of
 * the events that started before `end` (µs).
 */
export function traceTimes(trace: { traceEvents: TraceEvent[] }, end = Infinity, n = 25) {
  const threads = new Map<string, string>();
  for (const e of trace.traceEvents)
    if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args?.name ?? '');
  const main = new Map<string, number>();
  const worker = new Map<string, number>();
  const scripts = new Map<string, number>();
  let mainTasks = 0;
  for (const e of trace.traceEvents) {
    if (e.ph !== 'X' || e.dur === undefined || e.ts > end) continue;
    const thread = threads.get(`${e.pid}:${e.tid}`) ?? '';
    const totals =
      thread === 'CrRendererMain' ? main : thread.startsWith('DedicatedWorker') ? worker : undefined;
    if (!totals) continue;
    add(totals, e.name, e.dur);
    if (thread === 'CrRendererMain' && e.name === 'RunTask') mainTasks += e.dur;
    const url = e.args?.data?.url;
    if (url && /compile|parse|evaluate|EvaluateScript/i.test(e.name))
      add(scripts, `${thread === 'CrRendererMain' ? 'main' : 'worker'} ${e.name} ${basename(url)}`, e.dur);
  }
  return {
    mainThreadTasksMs: ms(mainTasks),
    mainThread: top(main, n),
    worker: top(worker, 12),
    scripts: top(scripts, 20),
  };
}

/** Starts a CPU profile of `page` and a Chromium trace; `stop` ends both, writes them to `dir`, and sums them. */
export async function startProfile(browser: Browser, page: Page, dir: string) {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await browser.startTracing(page, {
    categories: [
      'devtools.timeline',
      'v8',
      'v8.execute',
      'blink',
      'blink.user_timing',
      'toplevel',
      'disabled-by-default-devtools.timeline',
    ],
  });
  return {
    /** Marks the end in the page (what follows it is not summed: the page goes on reading), stops, sums. */
    async stop() {
      await page.evaluate(() => performance.mark('bench-open-end'));
      const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: CpuProfile };
      const trace = JSON.parse((await browser.stopTracing()).toString('utf8')) as { traceEvents: TraceEvent[] };
      await cdp.detach();
      await writeFile(join(dir, 'console-open.cpuprofile'), JSON.stringify(profile));
      await writeFile(join(dir, 'console-open.trace.json'), JSON.stringify(trace));
      const end = trace.traceEvents.find((e) => e.name === 'bench-open-end')?.ts ?? Infinity;
      return { selfTime: selfTimes(profile, end), trace: traceTimes(trace, end) };
    },
  };
}
