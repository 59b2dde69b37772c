import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDuraClient, type ConnectedDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { eventually, useTestInfra } from '@dura/testing';
import { dura, jsonLines, startSystem, type DuraSystem } from './system';

const infra = useTestInfra();
let system: DuraSystem;
let client: ConnectedDuraClient;
let env: Record<string, string>;
let dir: string;

const echoSteps = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } }));

/** Submits through the SDK and waits until the run ended and the projector caught up with it. */
async function finishedRun(runId: string, steps: { tool: string; args: object }[], tags: string[]) {
  await client.submitRun({ runId, agent: { kind: 'scripted', steps } as never, tags });
  const events: RunEvent[] = [];
  for await (const event of client.watchRun(runId)) events.push(event);
  await eventually(async () => {
    const page = await client.events(runId, { limit: 1000 });
    return page.events.length === events.length ? true : undefined;
  }, `the projector to reach the end of ${runId}`);
  return events;
}

let ok: RunEvent[];
let bad: RunEvent[];

/**
 * Waits until the run's tool call is in flight. A signal sent while a run is still pending (between
 * run_requested and run_started) is a separate case these tests do not exercise.
 */
async function callInFlight(runId: string): Promise<void> {
  await eventually(async () => {
    const events = await client.readEvents(runId);
    return events.some((e) => e.type === 'tool_call_requested') ? true : undefined;
  }, `a tool call of ${runId} in flight`);
}

beforeAll(async () => {
  system = await startSystem(infra().nats.url, infra().db.url);
  env = { NATS_URL: system.natsUrl, DURA_API_URL: system.apiUrl };
  client = connectDuraClient({ natsUrl: system.natsUrl, apiUrl: system.apiUrl });
  dir = await mkdtemp(join(tmpdir(), 'dura-cli-'));
  ok = await finishedRun('cli-ok', echoSteps(2), ['cli', 'good']);
  bad = await finishedRun('cli-bad', [{ tool: 'demo.fail', args: { message: 'boom' } }], ['cli']);
}, 180_000);

afterAll(async () => {
  await client?.close();
  await system?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('dura run', () => {
  it('submits a JSON request file, prints each event as it arrives, and exits 0 when the run completes', async () => {
    const file = join(dir, 'two-steps.json');
    await writeFile(
      file,
      JSON.stringify({ runId: 'cli-file-json', agent: { kind: 'scripted', steps: echoSteps(2) } }),
    );

    const { code, output } = await dura(['run', file], { env });

    expect(output).toContain('submitted cli-file-json; its events, live:');
    expect(output).toMatch(/^# +\d+ {2}run_requested {8}agent=scripted steps=2$/m);
    expect(output).toMatch(/^# +\d+ {2}tool_call_completed +call-2 -> \{"step":2\}/m);
    expect(output).toMatch(/^run cli-file-json completed$/m);
    const types = [...output.matchAll(/^# +\d+ {2}(\w+)/gm)].map((m) => m[1]);
    expect(types).toEqual((await client.readEvents('cli-file-json')).map((e) => e.type));
    expect(code).toBe(0);
  });

  it('reads a YAML request and, with --json, prints the events as JSON lines, equal to the log', async () => {
    const file = join(dir, 'request.yaml');
    await writeFile(
      file,
      [
        'runId: cli-file-yaml',
        'agent:',
        '  kind: scripted',
        '  steps:',
        '    - tool: echo',
        '      args: { from: yaml }',
        'tags: [yaml]',
      ].join('\n'),
    );

    const { code, output } = await dura(['run', file, '--json'], { env });

    const lines = jsonLines(output) as RunEvent[];
    expect(lines).toEqual(JSON.parse(JSON.stringify(await client.readEvents('cli-file-yaml'))));
    expect(lines.at(-1)?.type).toBe('run_completed');
    expect(lines[0]).toMatchObject({ type: 'run_requested', data: { request: { tags: ['yaml'] } } });
    expect(code).toBe(0);
  });

  it('builds a plan from --tool/--args, and exits 1 when the run fails', async () => {
    const { code, output } = await dura(
      [
        'run',
        '--id',
        'cli-flags-fail',
        '--tool',
        'echo',
        '--args',
        '{"a":1}',
        '--tool',
        'demo.fail',
        '--args',
        '{"message":"no luck"}',
      ],
      { env },
    );

    expect(output).toMatch(/tool_call_requested +step 1 echo \{"a":1\}/);
    expect(output).toMatch(/tool_call_failed +call-2 attempt 1: no luck/);
    expect(output).toMatch(/^run cli-flags-fail failed: \S+: .+$/m);
    expect(code).toBe(1);
  });

  it('resubmitting a run id with the same request starts nothing new: it follows the existing run to the same outcome', async () => {
    const file = join(dir, 'cli-ok-again.json');
    await writeFile(
      file,
      JSON.stringify({
        runId: 'cli-ok',
        agent: { kind: 'scripted', steps: echoSteps(2) },
        tags: ['cli', 'good'],
      }),
    );
    const { code, output } = await dura(['run', file], { env });

    expect(output).toContain('run cli-ok was already submitted; following it');
    expect([...output.matchAll(/^# +\d+ {2}(\w+)/gm)].map((m) => m[1])).toEqual(ok.map((e) => e.type));
    expect(code).toBe(0);
  });

  it('resubmitting a run id with a different request is a conflict (exit 2) and records nothing', async () => {
    const { code, output } = await dura(['run', '--id', 'cli-ok', '--tool', 'echo'], { env });

    expect(output).toMatch(
      /dura: run id cli-ok is already used by a different request \(dura get cli-ok shows it\); submit with a new --id.* \[run_id_conflict\]/,
    );
    expect(output).not.toContain('following it');
    expect(code).toBe(2);
    expect((await client.readEvents('cli-ok')).map((e) => e.seq)).toEqual(ok.map((e) => e.seq));
  });

  it('--detach --json prints { runId, duplicate } and exits 0 at once', async () => {
    const { code, output } = await dura(
      ['run', '--detach', '--json', '--tool', 'echo', '--tag', 'detached'],
      { env },
    );

    expect(JSON.parse(output)).toEqual({
      runId: expect.stringMatching(/^run_[0-9a-f]{32}$/),
      duplicate: false,
    });
    expect(code).toBe(0);
  });

  it('an invalid request is a usage error naming the field', async () => {
    const { code, output } = await dura(['run', '--tool', 'Not A Tool'], { env });

    expect(output).toMatch(/run request is invalid\n.*agent\.steps\.0\.tool: /);
    expect(code).toBe(2);
  });
});

describe('dura watch', () => {
  it('prints a finished run from the start and exits with its outcome', async () => {
    const [good, failed] = await Promise.all([
      dura(['watch', 'cli-ok'], { env }),
      dura(['watch', 'cli-bad'], { env }),
    ]);

    expect(
      good.output
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('#')),
    ).toHaveLength(ok.length);
    expect(good.output).toMatch(/^run cli-ok completed$/m);
    expect(good.code).toBe(0);
    expect(failed.output).toMatch(/^run cli-bad failed: /m);
    expect(failed.code).toBe(1);
  });

  it('--from SEQ starts at that seq; --json prints JSON lines', async () => {
    const from = ok[3]!.seq;

    const { code, output } = await dura(['watch', 'cli-ok', '--from', String(from), '--json'], { env });

    expect((jsonLines(output) as RunEvent[]).map((e) => e.seq)).toEqual(ok.slice(3).map((e) => e.seq));
    expect(code).toBe(0);
  });

  it('follows a live run until it ends', async () => {
    await client.submitRun({
      runId: 'cli-live',
      agent: { kind: 'scripted', steps: [{ tool: 'test.sleep', args: { ms: 6000 } }] },
    });
    const watching = dura.spawn(['watch', 'cli-live'], env);

    await watching.waitForOutput(/tool_call_requested +step 1 test\.sleep/, 30_000);
    expect(watching.output()).not.toMatch(/run_completed/);
    expect(await watching.exited).toEqual({ code: 0, signal: null });
    await eventually(
      () => Promise.resolve(/^run cli-live completed$/m.test(watching.output()) ? true : undefined),
      'the outcome line',
    );
  });

  it('Ctrl-C stops following and exits 130', async () => {
    await client.submitRun({
      runId: 'cli-interrupted',
      agent: { kind: 'scripted', steps: [{ tool: 'test.sleep', args: { ms: 10_000 } }] },
    });
    const watching = dura.spawn(['watch', 'cli-interrupted'], env);
    await watching.waitForOutput(/tool_call_requested +step 1 test\.sleep/, 30_000);

    await watching.kill('SIGINT');

    expect(await watching.exited).toEqual({ code: 130, signal: null });
    expect(watching.output()).not.toMatch(/run_completed/);
  });

  it('a --from past the end of a finished run prints nothing and exits with the outcome', async () => {
    const { code, output } = await dura(['watch', 'cli-bad', '--from', String(bad.at(-1)!.seq + 1000)], {
      env,
    });

    expect(output).toMatch(/run cli-bad ended \(failed\) at seq \d+, before seq \d+/);
    expect(code).toBe(1);
  });

  it('an unknown run exits 3', async () => {
    const { code, output } = await dura(['watch', 'no-such-run'], { env });

    expect(output).toMatch(/run no-such-run has no events: check the run id .* \[run_not_found\]/);
    expect(code).toBe(3);
  });
});

describe('dura get', () => {
  it('prints the state as a table, and with --json the fold of the log', async () => {
    const [human, json] = await Promise.all([
      dura(['get', 'cli-ok'], { env }),
      dura(['get', 'cli-ok', '--json'], { env }),
    ]);

    expect(human.output).toMatch(/^status +completed$/m);
    expect(human.output).toMatch(/^steps +2$/m);
    expect(human.output).toMatch(/^cost +\$0\.0000$/m);
    expect(human.output).toMatch(/^call +step +tool +status +attempts +result$/m);
    expect(human.output).toMatch(/^call-1 +1 +echo +completed +1 +\{"step":1\}$/m);
    expect(human.code).toBe(0);
    expect(JSON.parse(json.output)).toEqual(JSON.parse(JSON.stringify(fold(ok))));
    expect(json.code).toBe(0);
  });

  it('--at SEQ prints the state as of that seq: the fold of the events up to it', async () => {
    const at = ok[4]!.seq;

    const [human, json] = await Promise.all([
      dura(['get', 'cli-ok', '--at', String(at)], { env }),
      dura(['get', 'cli-ok', '--at', String(at), '--json'], { env }),
    ]);

    expect(human.output).toContain(`as of seq ${at}:`);
    expect(human.output).toMatch(/^status +running$/m);
    expect(JSON.parse(json.output)).toEqual({
      runId: 'cli-ok',
      at,
      state: JSON.parse(JSON.stringify(fold(ok.slice(0, 5)))),
    });
  });

  it('an unknown run exits 3, with and without --at', async () => {
    const [now, past] = await Promise.all([
      dura(['get', 'no-such-run'], { env }),
      dura(['get', 'no-such-run', '--at', '5'], { env }),
    ]);

    expect(now.output).toMatch(/run no-such-run has no events/);
    expect([now.code, past.code]).toEqual([3, 3]);
  });
});

describe('dura events', () => {
  it('prints a page of readable lines, says where the next page starts, and --json gives { events, nextFromSeq }', async () => {
    const [page, json, rest] = await Promise.all([
      dura(['events', 'cli-ok', '--limit', '3'], { env }),
      dura(['events', 'cli-ok', '--limit', '3', '--json'], { env }),
      dura(['events', 'cli-ok', '--from', String(ok[3]!.seq), '--json'], { env }),
    ]);

    expect(page.output.split('\n').filter((l) => l.startsWith('#'))).toHaveLength(3);
    expect(page.output).toContain(`more: dura events cli-ok --from ${ok[3]!.seq}`);
    expect(page.code).toBe(0);
    expect(JSON.parse(json.output)).toEqual(
      JSON.parse(JSON.stringify({ events: ok.slice(0, 3), nextFromSeq: ok[3]!.seq })),
    );
    expect(JSON.parse(rest.output)).toEqual(JSON.parse(JSON.stringify({ events: ok.slice(3) })));
  });

  it('an unknown run exits 3', async () => {
    const { code, output } = await dura(['events', 'no-such-run'], { env });

    expect(output).toMatch(/has no events of run no-such-run/);
    expect(code).toBe(3);
  });
});

describe('dura ls', () => {
  it('prints an aligned table of runs, filtered by status, tag and tool', async () => {
    const [all, failed, tagged, tool] = await Promise.all([
      dura(['ls', '--tag', 'cli'], { env }),
      dura(['ls', '--status', 'failed', '--tag', 'cli'], { env }),
      dura(['ls', '--tag', 'cli', '--tag', 'good'], { env }),
      dura(['ls', '--tool', 'demo.fail', '--json'], { env }),
    ]);

    const lines = all.output.trim().split('\n');
    expect(lines[0]).toMatch(
      /^RUN +STATUS +AGENT +PARENT +COST +STEPS +PENDING +CREATED +UPDATED +TAGS +LAST ERROR$/,
    );
    const statusColumn = lines[0]!.indexOf('STATUS');
    for (const line of lines.slice(1))
      expect(line.slice(statusColumn - 2, statusColumn + 1)).toMatch(/^ {2}\S$/);
    expect(lines.find((l) => l.startsWith('cli-ok '))?.slice(statusColumn)).toMatch(
      /^completed +scripted +- +\$0\.0000 +2 +0 /,
    );
    expect(lines.find((l) => l.startsWith('cli-bad '))?.slice(statusColumn)).toMatch(/^failed /);
    expect(all.code).toBe(0);
    expect(failed.output).toMatch(/^cli-bad /m);
    expect(failed.output).not.toMatch(/^cli-ok /m);
    expect(tagged.output).toMatch(/^cli-ok /m);
    expect(tagged.output).not.toMatch(/^cli-bad /m);
    const byTool = JSON.parse(tool.output) as { runs: { runId: string }[] };
    expect(byTool.runs.map((r) => r.runId)).toContain('cli-bad');
    expect(byTool.runs.map((r) => r.runId)).not.toContain('cli-ok');
  });

  it('pages with --limit and --cursor, with no run twice and none skipped', async () => {
    const first = await dura(['ls', '--tag', 'cli', '--limit', '1', '--json', '--sort', 'created_asc'], {
      env,
    });
    const page1 = JSON.parse(first.output) as { runs: { runId: string }[]; nextCursor?: string };
    expect(page1.runs.map((r) => r.runId)).toEqual(['cli-ok']);
    expect(page1.nextCursor).toEqual(expect.any(String));

    const second = await dura(
      ['ls', '--tag', 'cli', '--limit', '1', '--sort', 'created_asc', '--cursor', page1.nextCursor!],
      { env },
    );

    expect(second.output).toMatch(/^cli-bad /m);
    expect(second.output).not.toMatch(/^cli-ok /m);
    expect(second.code).toBe(0);
  });

  it('says so when no run matches', async () => {
    const { code, output } = await dura(['ls', '--since', '2999-01-01T00:00:00Z'], { env });

    expect(output.trim()).toBe('no runs match');
    expect(code).toBe(0);
  });
});

describe('dura signal and dura cancel', () => {
  it('signal sends a named signal with its payload, which the run records', async () => {
    await client.submitRun({
      runId: 'cli-signalled',
      agent: { kind: 'scripted', steps: [{ tool: 'test.sleep', args: { ms: 15000 } }] },
    });
    await callInFlight('cli-signalled');

    const { code, output } = await dura(
      ['signal', 'cli-signalled', 'nudge', '--payload', '{"by":"ops"}', '--id', 'nudge-1', '--json'],
      { env },
    );

    expect(JSON.parse(output)).toEqual({
      runId: 'cli-signalled',
      name: 'nudge',
      signalId: 'nudge-1',
      duplicate: false,
    });
    expect(code).toBe(0);
    const received = await eventually(async () => {
      const events = await client.readEvents('cli-signalled');
      return events.find((e) => e.type === 'signal_received');
    }, 'the planner to record the signal');
    expect(received.data).toEqual({ signalId: 'nudge-1', name: 'nudge', payload: { by: 'ops' } });
  });

  it('cancel sends cancel with the reason; the run ends cancelled and watch exits 1', async () => {
    await client.submitRun({
      runId: 'cli-cancelled',
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'test.sleep', args: { ms: 15000 } },
          { tool: 'echo', args: {} },
        ],
      },
    });
    await callInFlight('cli-cancelled');

    const sent = await dura(['cancel', 'cli-cancelled', '--reason', 'wrong branch'], { env });
    const watched = await dura(['watch', 'cli-cancelled'], { env });

    expect(sent.output).toMatch(/^cancel sent to cli-cancelled \(signal id sig_[0-9a-f]+\)/m);
    expect(sent.code).toBe(0);
    expect(watched.output).toMatch(/run_cancelled/);
    expect(watched.output).toMatch(/^run cli-cancelled cancelled: wrong branch$/m);
    expect(watched.code).toBe(1);
  });

  it('approve dispatches a call that waits for approval; reject fails it with the reason, unrun', async () => {
    const guarded = (runId: string) =>
      client.submitRun({ runId, agent: { kind: 'scripted', steps: [{ tool: 'test.guarded', args: {} }] } });
    const waiting = (runId: string) =>
      eventually(async () => {
        const events = await client.readEvents(runId);
        return events.some((e) => e.type === 'wait_requested') ? true : undefined;
      }, `${runId} to wait for approval`);
    await Promise.all([guarded('cli-approved'), guarded('cli-rejected')]);
    await Promise.all([waiting('cli-approved'), waiting('cli-rejected')]);

    const approved = await dura(['approve', 'cli-approved', '--call', 'call-1'], { env });
    const rejected = await dura(['reject', 'cli-rejected', '--reason', 'not today', '--json'], { env });
    expect(approved.output).toMatch(
      /^sent approve \{"callId":"call-1","approved":true\} to cli-approved \(signal id sig_[0-9a-f]+\)/m,
    );
    expect(approved.code).toBe(0);
    expect(JSON.parse(rejected.output)).toMatchObject({
      runId: 'cli-rejected',
      name: 'reject',
      payload: { callId: 'call-1', approved: false, reason: 'not today' },
    });

    const [ok, no] = await Promise.all([
      dura(['watch', 'cli-approved'], { env }),
      dura(['watch', 'cli-rejected'], { env }),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.output).toMatch(/tool_call_completed/);
    expect(no.code).toBe(1);
    const state = fold(await client.readEvents('cli-rejected'));
    expect(state.calls[0]).toMatchObject({ status: 'failed', error: { code: 'rejected' } });
    expect(state.calls[0]!.error!.message).toContain('not today');
  });

  it('cancel of a run that already ended sends nothing and exits 1; of an unknown run, 3', async () => {
    const [ended, unknown, signalUnknown] = await Promise.all([
      dura(['cancel', 'cli-ok'], { env }),
      dura(['cancel', 'no-such-run'], { env }),
      dura(['signal', 'no-such-run', 'go'], { env }),
    ]);

    expect(ended.output).toMatch(/run cli-ok already ended \(completed\); nothing to cancel/);
    expect(ended.code).toBe(1);
    expect(unknown.code).toBe(3);
    expect(signalUnknown.output).toMatch(/run no-such-run has no events/);
    expect(signalUnknown.code).toBe(3);
  });
});
