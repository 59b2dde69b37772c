// docs/streaming.md, run as written: the run and the text it describes are stored, then each request of the
// page gets exactly the events the page shows after it (ids included).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { tokensSubject } from '@dura/contracts';
import { openSse, repoRoot } from '@dura/testing';
import { RunScript, thoughtWith } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const sys = useProjectorApi(() => ({ keepaliveMs: 60_000 }));
const doc = readFileSync(join(repoRoot(), 'docs/streaming.md'), 'utf8');
const RUN = 'story-1';
const ANSWER = 'Once upon a time, a run resumed.';

/** The page's examples: each `http` block (a request) and the `text` block after it (the events it gets). */
function examples(): { request: string; events: string }[] {
  return [...doc.matchAll(/```http\n([\s\S]*?)```[\s\S]*?```text\n([\s\S]*?)```/g)].map((m) => ({
    request: m[1] ?? '',
    events: m[2] ?? '',
  }));
}

beforeAll(async () => {
  const { setup } = sys();
  // The story of the page: a first attempt streams two pieces, the planner dies, a second attempt answers
  // in one piece and is recorded, and the run completes.
  const script = new RunScript(RUN).request().start();
  await setup.store.append(RUN, [...script.events], { expectedSeq: 'any' });
  const token = (attempt: string, n: number, delta: string) =>
    setup.js.publish(
      tokensSubject(RUN),
      JSON.stringify({ runId: RUN, decision: 0, call: 0, attempt, n, delta }),
    );
  await token('7f3a', 0, 'Once upon');
  await token('7f3a', 1, ' a ti');
  await token('c41d', 0, ANSWER);
  const done = script.events.length;
  thoughtWith(script, ANSWER).add('run_completed', { output: ANSWER });
  await setup.store.append(RUN, script.events.slice(done), { expectedSeq: 'any' });
});

describe('docs/streaming.md', () => {
  it('has its examples, and each request gets exactly the events shown', async () => {
    const shown = examples();
    expect(shown.length).toBeGreaterThanOrEqual(2);
    for (const { request, events } of shown) {
      const [line = '', ...headers] = request.trim().split('\n');
      const path = line.split(' ')[1] ?? '';
      const lastEventId = headers
        .find((h) => h.startsWith('Last-Event-ID: '))
        ?.slice('Last-Event-ID: '.length);
      const sse = await openSse(`${sys().http.url}${path}`, lastEventId);
      expect(sse.status).toBe(200);
      const got: string[] = [];
      for await (const m of sse.messages) {
        if (m.comment !== undefined) continue;
        got.push([m.id && `id: ${m.id}`, `event: ${m.event}`, `data: ${m.data}`].filter(Boolean).join('\n'));
      }
      expect(got.join('\n\n')).toBe(events.trim());
    }
  });
});
