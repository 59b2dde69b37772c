#!/usr/bin/env node
// Summarizes V8 CPU profiles (`node --cpu-prof`, or `BENCH_CPU_PROF=<dir> npm run bench`): for each
// profile, the busy share of the wall time and the top self-time costs by function and by module.
// Usage: node scripts/cpu-profile-top.mjs <dir-or-file...> [--top N] [--json]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

const args = process.argv.slice(2);
const json = args.includes('--json');
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 12;
const inputs = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
if (inputs.length === 0) {
  console.error('usage: node scripts/cpu-profile-top.mjs <dir-or-file...> [--top N] [--json]');
  process.exit(2);
}

function profilesIn(path) {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path).flatMap((name) => {
    const full = join(path, name);
    if (statSync(full).isDirectory()) return profilesIn(full);
    return name.endsWith('.cpuprofile') ? [full] : [];
  });
}

/** Where a frame's code lives: a package, one of our workspaces, Node itself, or a V8 pseudo-frame. */
function moduleOf(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  const own = url.match(/\/((?:libs|services)\/[^/]+)\//);
  if (own) return own[1];
  if (url.startsWith('node:')) return 'node';
  return relative(process.cwd(), url.replace(/^file:\/\//, ''));
}

function summarize(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const wallUs = profile.endTime - profile.startTime;
  const fns = new Map();
  const modules = new Map();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id);
    const name = callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = callFrame.url ? `${basename(callFrame.url)}:${callFrame.lineNumber + 1}` : '';
    const key = `${name} ${where}`.trim();
    const mod = moduleOf(callFrame.url, name);
    fns.set(key, { us: (fns.get(key)?.us ?? 0) + us, module: mod });
    modules.set(mod, (modules.get(mod) ?? 0) + us);
  }
  const busyUs = wallUs - idleUs;
  const rank = (entries) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 100) / 10,
        share: Math.round((us / busyUs) * 1000) / 10,
      }));
  return {
    profile: relative(process.cwd(), file),
    wallMs: Math.round(wallUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    functions: rank([...fns].map(([k, v]) => [`${k} [${v.module}]`, v.us])),
    modules: rank(modules),
  };
}

const reports = inputs.flatMap(profilesIn).sort().map(summarize);
if (json) {
  console.log(JSON.stringify(reports, null, 2));
} else {
  for (const r of reports) {
    console.log(`\n${r.profile}: busy ${r.busyMs} ms of ${r.wallMs} ms wall`);
    console.log('  by module (self time, % of busy):');
    for (const m of r.modules)
      console.log(`    ${m.share.toFixed(1).padStart(5)}%  ${String(m.ms).padStart(8)} ms  ${m.name}`);
    console.log('  by function:');
    for (const f of r.functions)
      console.log(`    ${f.share.toFixed(1).padStart(5)}%  ${String(f.ms).padStart(8)} ms  ${f.name}`);
  }
}
