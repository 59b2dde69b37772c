// The console in Debian's Chromium against a real stack (planner, gateway and projector processes, NATS,
// Postgres, a fake model): the list and a run page, approving, signalling and cancelling from the page, time
// travel, a read-only token, and live updates (new runs, streamed model tokens). Screenshots for the docs
// are taken along the way (docs/images/console-*.png). Longer than 300 lines on purpose: every test shares
// the one stack this file starts, and a second file would start a second one in CI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRequest } from '@dura/contracts';
import { repoRoot } from '@dura/testing';
import {
  screenshot,
  statusOf,
  TOKENS,
  TRACES_URL,
  untilStatus,
  useConsoleStack,
  WAIT_MS,
} from './console-stack';

const stack = useConsoleStack();
function waitForSignal(runId: string, name: string): Omit<RunRequest, 'v'> & { runId: string } {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [{ tool: 'dura.wait_for_signal', args: { name } }],
      output: '$steps.1',
    },
    tags: ['console-test'],
  };
}

describe('the Dura Console', () => {
  it('lists the demo run and shows its events on its page, with the trace link', async () => {
    const { client, open } = stack();
    const demo = JSON.parse(
      readFileSync(join(repoRoot(), 'examples', 'deploy-pipeline.json'), 'utf8'),
    ) as Omit<RunRequest, 'v'>;
    await client.submitRun({ ...demo, runId: 'demo-deploy' });
    const { page, context } = await open(TOKENS.operator);
    try {
      await page.locator('[data-run-id="demo-deploy"]').waitFor({ timeout: WAIT_MS });
      await page
        .locator('[data-run-id="demo-deploy"] [data-status="completed"]')
        .waitFor({ timeout: WAIT_MS });
      // The list reads as a list of runs: the tab names the page, a favicon, full times, duration and cost.
      expect(await page.title()).toBe('Runs · Dura Console');
      expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/);
      const demoRow = page.locator('[data-run-id="demo-deploy"]');
      expect(await demoRow.getByTestId('started').textContent()).toMatch(
        /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
      );
      expect(await demoRow.getByTestId('duration').textContent()).toMatch(/^\d+(\.\d)? (ms|s)$/);
      expect(await demoRow.getByTestId('cost').textContent()).toBe('$0');
      expect(await demoRow.getByTestId('error').textContent()).toBe('');
      await screenshot(page, 'list');
      await page.locator('[data-run-id="demo-deploy"] a').click();
      await page.locator('[data-type="run_completed"]').waitFor({ timeout: WAIT_MS });
      await expect
        .poll(() => page.title(), { timeout: WAIT_MS })
        .toBe('demo-deploy (completed) · Dura Console');
      // The header: when it started and ended, how long it took, its input and output one click from in full.
      expect(await page.getByTestId('run-started').textContent()).toMatch(
        /^Started \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/,
      );
      expect(await page.getByTestId('run-ended').textContent()).toMatch(/^Ended \d{4}-/);
      expect(await page.getByTestId('run-duration').textContent()).toMatch(/^took \d+(\.\d)? (ms|s)$/);
      await page.getByTestId('run-output').locator('summary').click();
      expect(await page.getByTestId('run-output').locator('pre').textContent()).toContain('"deployment"');
      expect(await page.getByTestId('time-axis').locator('.tick').count()).toBe(5);
      const types = await page
        .locator('[data-type]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type')));
      expect(types).toEqual(
        expect.arrayContaining([
          'run_requested',
          'run_started',
          'tool_call_requested',
          'tool_call_completed',
        ]),
      );
      expect(await page.locator('.event-row.kind-tool').count()).toBeGreaterThanOrEqual(5);
      await expect
        .poll(() => page.locator('[data-testid="trace"] a').getAttribute('href'), { timeout: WAIT_MS })
        .toMatch(new RegExp(`^${TRACES_URL.replace('{traceId}', '')}[0-9a-f]{32}$`));
      await page.locator('[data-type="tool_call_requested"]').first().click();
      await page.locator('[data-testid="causes"] li').first().waitFor({ timeout: WAIT_MS });
      await screenshot(page, 'run');
      // Light and dark: the toggle switches the whole page, and the choice is kept.
      const theme = () => page.evaluate(() => document.documentElement.dataset['theme']);
      const before = await theme();
      await page.getByRole('button', { name: /Switch to (dark|light) theme/ }).click();
      await expect.poll(theme).not.toBe(before);
      if ((await theme()) === 'dark') await screenshot(page, 'run-dark');
    } finally {
      await context.close();
    }
  });

  it('approves a waiting call from the page, and the run completes', async () => {
    const { client, open, script } = stack();
    const input = 'Echo 42, once a human approves.';
    script(input, (n) =>
      n === 0
        ? {
            kind: 'message',
            content: 'Echoing 42.',
            toolCalls: [{ name: 'echo', arguments: { amount: 42 } }],
          }
        : { kind: 'message', content: 'Echoed 42.' },
    );
    await client.submitRun({ runId: 'approval-1', agent: { kind: 'agent', name: 'cashier' }, input });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/approval-1');
    try {
      const approval = page.locator('[data-testid="approval"]');
      await approval.waitFor({ timeout: WAIT_MS });
      // The picture shows the page as it settles: the wait in the event list, and the run's trace link.
      await page.locator('[data-type="wait_requested"]').waitFor({ timeout: WAIT_MS });
      await page.locator('[data-testid="trace"] a').waitFor({ timeout: WAIT_MS });
      // The box says what is asked (the tool, its arguments), who may answer, and by when.
      expect(await approval.getByTestId('approval-tool').innerText()).toMatch(/Call \S+ to echo waits/);
      expect(await approval.getByTestId('approval-args').innerText()).toContain('{"amount":42}');
      const who = await approval.getByTestId('approval-who').innerText();
      expect(who).toContain('scope signal in tenant default');
      expect(who).toContain('"approve" or "reject"');
      expect(await approval.getByTestId('approval-deadline').innerText()).toMatch(
        /^Deadline \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}: if nobody answers, the call is rejected \(reject\)\.$/,
      );
      await screenshot(page, 'approval');
      await approval.getByRole('button', { name: 'Approve' }).click();
      await untilStatus(page, 'completed');
      const state = await client.getRun('approval-1');
      expect(state.calls.map((c) => [c.tool, c.status, c.approval?.decision])).toEqual([
        ['echo', 'completed', 'approved'],
      ]);
      // The call's row says who answered (the signal: no sender is recorded), when in full, and with what.
      const [answer] = state.signals;
      const callRow = page.locator('[data-type="tool_call_requested"] .facts').first();
      await expect
        .poll(() => callRow.innerText(), { timeout: WAIT_MS })
        .toMatch(
          new RegExp(
            `^approved by signal approve ${answer!.signalId} · at \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}`,
          ),
        );
    } finally {
      await context.close();
    }
  });

  it('approves a ctx.approve-style verdict wait from the page with {approved: true}; reject sends the refusal', async () => {
    const { client, open } = stack();
    // A wait for a person's verdict, as ctx.approve opens it: the buttons send the wait's own signal.
    const verdict = (runId: string): Omit<RunRequest, 'v'> & { runId: string } => ({
      runId,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'dura.wait_for_signal', args: { name: 'publish', approval: true, timeoutSeconds: 3600 } },
        ],
        output: '$steps.1',
      },
    });
    for (const [runId, button, output] of [
      ['verdict-yes', 'Approve', { approved: true }],
      ['verdict-no', 'Reject', { approved: false, reason: 'rejected in the console' }],
    ] as const) {
      await client.submitRun(verdict(runId));
      const { page, context } = await open(TOKENS.operator, `/ui/runs/${runId}`);
      try {
        const approval = page.locator('[data-testid="approval"]');
        await approval.waitFor({ timeout: WAIT_MS });
        expect(await approval.getByTestId('approval-tool').innerText()).toBe(
          'Waits for a verdict (signal publish) through dura.wait_for_signal',
        );
        expect(await approval.getByTestId('approval-args').innerText()).toContain('"timeoutSeconds":3600');
        expect(await approval.getByTestId('approval-who').innerText()).toContain('signal "publish"');
        expect(await approval.getByTestId('approval-deadline').innerText()).toMatch(
          /^Deadline \d{4}-.*: if nobody answers, the run goes on without a verdict \(not approved\) \(continue\)\.$/,
        );
        await approval.getByRole('button', { name: button }).click();
        await untilStatus(page, 'completed');
        const state = await client.getRun(runId);
        expect(state.output).toEqual(output);
        // The wait's row says with what, by which signal and when; a refusal gives its reason.
        const said =
          button === 'Approve'
            ? `approved by signal publish ${state.signals[0]!.signalId} · at `
            : `rejected by signal publish ${state.signals[0]!.signalId} · at `;
        const waitRow = page.locator('[data-type="wait_requested"] .facts');
        await expect.poll(() => waitRow.innerText(), { timeout: WAIT_MS }).toContain(said);
        if (button === 'Reject')
          expect(await waitRow.innerText()).toContain('reason: rejected in the console');
      } finally {
        await context.close();
      }
    }
  });

  it('sends a signal with a payload from the page; time travel shows waiting at the wait and completed at the end', async () => {
    const { client, open } = stack();
    await client.submitRun(waitForSignal('signal-1', 'go'));
    const { page, context } = await open(TOKENS.operator, '/ui/runs/signal-1');
    try {
      await untilStatus(page, 'waiting');
      await page.getByLabel('Signal name').fill('go');
      await page.getByLabel('Signal payload (JSON)').fill('{"approvedBy": "console"}');
      await page.getByRole('button', { name: 'Send signal' }).click();
      await untilStatus(page, 'completed');
      expect((await client.getRun('signal-1')).output).toEqual({ approvedBy: 'console' });

      const waitN = await page.locator('[data-type="wait_requested"]').getAttribute('data-n');
      const lastN = await page.locator('[data-type="run_completed"]').getAttribute('data-n');
      // Events are numbered within the run from 1, whatever their place in the shared stream.
      const requested = page.locator('[data-type="run_requested"]');
      expect(await requested.getAttribute('data-n')).toBe('1');
      expect(await requested.locator('.seq').textContent()).toBe('1');
      expect(Number(await requested.getAttribute('data-seq'))).toBeGreaterThan(1);
      await page.getByTestId('step-picker').fill(waitN ?? '');
      await expect
        .poll(() => page.getByTestId('tt-status').textContent(), { timeout: WAIT_MS })
        .toContain('status: waiting');
      await screenshot(page, 'time-travel');
      await page.getByTestId('step-picker').fill(lastN ?? '');
      await expect
        .poll(() => page.getByTestId('tt-status').textContent(), { timeout: WAIT_MS })
        .toContain('status: completed');
      // The keyboard moves through the events too.
      await page.getByTestId('timeline').focus();
      await page.keyboard.press('ArrowUp');
      await expect
        .poll(() => page.getByTestId('tt-status').textContent(), { timeout: WAIT_MS })
        .toContain(`at #${Number(lastN) - 1}`);

      // Fork after the run started (before the wait's call): the new run plans again and waits for "go".
      const startedN = await page.locator('[data-type="run_started"]').getAttribute('data-n');
      await page.getByTestId('step-picker').fill(startedN ?? '');
      // The button names the run's own number; the fork request carries the stream sequence.
      await page.getByRole('button', { name: 'Fork at #2' }).click();
      await page.waitForURL(/\/ui\/runs\/fork_/, { timeout: WAIT_MS });
      await untilStatus(page, 'waiting');
      const forkId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1) ?? '');
      expect((await client.getRun(forkId)).waiting).toMatchObject({ kind: 'signal', signal: 'go' });
    } finally {
      await context.close();
    }
  });

  it('shows a parent and its child run, linked both ways, in the list and on their pages', async () => {
    const { client, open } = stack();
    const child = {
      kind: 'scripted',
      steps: [{ tool: 'echo', args: { hello: 'parent' } }],
      output: '$steps.1',
    };
    await client.submitRun({
      runId: 'family-1',
      agent: {
        kind: 'scripted',
        steps: [{ tool: 'dura.run_agent', args: { agent: child } }],
        output: '$steps.1',
      },
    });
    const { page, context } = await open(TOKENS.operator, '/ui/?idPrefix=family-1');
    try {
      const parentRow = page.locator('[data-run-id="family-1"]');
      const childRow = page.locator('[data-run-id="family-1-c1"]');
      await parentRow.getByText('1 children').waitFor({ timeout: WAIT_MS });
      await childRow.locator('[title="child of family-1"]').waitFor({ timeout: WAIT_MS });
      await parentRow.locator('a').click();
      await untilStatus(page, 'completed');
      await page.locator('.run a', { hasText: 'family-1-c1' }).click();
      await page.getByText('child of').waitFor({ timeout: WAIT_MS });
      expect(await page.locator('.run-head a', { hasText: 'family-1' }).getAttribute('href')).toBe(
        '/ui/runs/family-1',
      );
    } finally {
      await context.close();
    }
  });

  it('cancels a run from the page', async () => {
    const { client, open } = stack();
    await client.submitRun(waitForSignal('cancel-1', 'never'));
    const { page, context } = await open(TOKENS.operator, '/ui/runs/cancel-1');
    try {
      await untilStatus(page, 'waiting');
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await untilStatus(page, 'cancelled');
      expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('shows a read-only token no action, and the API refuses the action when forced', async () => {
    const { client, open, apiUrl } = stack();
    await client.submitRun(waitForSignal('readonly-1', 'go'));
    const { page, context } = await open(TOKENS.reader, '/ui/runs/readonly-1');
    try {
      await untilStatus(page, 'waiting');
      await page.getByTestId('time-travel').waitFor({ timeout: WAIT_MS });
      expect(await page.getByTestId('session').textContent()).toContain('reader');
      expect(await page.getByTestId('actions').count()).toBe(0);
      for (const name of ['Approve', 'Send signal', 'Cancel run'])
        expect(await page.getByRole('button', { name }).count()).toBe(0);
      const forced = await page.evaluate(
        async ({ url, token }) => {
          const post = (path: string, body: unknown) =>
            fetch(url + path, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            }).then((r) => r.status);
          return [
            await post('/runs/readonly-1/cancel', {}),
            await post('/runs/readonly-1/signals', { name: 'go' }),
            await post('/runs/readonly-1/fork', { atSeq: 1 }),
          ];
        },
        { url: apiUrl, token: TOKENS.reader },
      );
      expect(forced).toEqual([403, 403, 403]);
      // Without a token the API answers 401 and the console asks for one.
      const anonymous = await stack().browser.newContext();
      const bare = await anonymous.newPage();
      await bare.goto(`${apiUrl}/ui/`);
      await bare.getByLabel('API token').waitFor({ timeout: WAIT_MS });
      expect(await bare.evaluate((url) => fetch(`${url}/runs`).then((r) => r.status), apiUrl)).toBe(401);
      await anonymous.close();
      expect((await client.getRun('readonly-1')).status).toBe('waiting');
    } finally {
      await context.close();
    }
  });

  it('shows a run started after the page opened without a reload', async () => {
    const { client, open } = stack();
    const { page, context } = await open(TOKENS.operator);
    try {
      await page.getByTestId('run-list').waitFor({ timeout: WAIT_MS });
      await page.evaluate(() => {
        (window as unknown as { stillHere: boolean }).stillHere = true;
      });
      await client.submitRun(waitForSignal('live-1', 'go'));
      await page.locator('[data-run-id="live-1"]').waitFor({ timeout: WAIT_MS });
      expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
      await screenshot(page, 'list');
    } finally {
      await context.close();
    }
  });

  it("streams the model's tokens into the timeline while it answers", async () => {
    const { client, open, script } = stack();
    const input = 'Tell me a very short story.';
    const story = 'Once upon a time, a durable run resumed at step forty and lived happily ever after.';
    script(input, () => ({ kind: 'message', content: story, delayMs: 4_000, pieceDelayMs: 1_500 }));
    await client.submitRun({ runId: 'tokens-1', agent: { kind: 'agent', name: 'talker' }, input });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/tokens-1');
    try {
      const live = page.getByTestId('live-tokens');
      await live.waitFor({ timeout: WAIT_MS });
      await expect.poll(() => live.textContent(), { timeout: WAIT_MS }).toContain('Once upon');
      // Seen before the thought is recorded: the run had not completed yet.
      expect(await statusOf(page, 'completed').count()).toBe(0);
      await untilStatus(page, 'completed');
      await page.locator('[data-type="thought"]').waitFor({ timeout: WAIT_MS });
      await expect.poll(() => live.count(), { timeout: WAIT_MS }).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('shows the answer from its first word after each reload while it streams, then the recorded answer', async () => {
    const { client, open, script } = stack();
    const input = 'Tell me a story worth reloading for.';
    const story =
      'Once upon a time, a page was reloaded three times while a durable run told it a story, and lost no word.';
    script(input, () => ({
      kind: 'message',
      content: story,
      delayMs: 2_000,
      pieceChars: 6,
      pieceDelayMs: 600,
    }));
    await client.submitRun({ runId: 'tokens-reload', agent: { kind: 'agent', name: 'talker' }, input });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/tokens-reload');
    try {
      const live = page.getByTestId('live-tokens');
      const shown = async () => ((await live.count()) > 0 ? ((await live.textContent()) ?? '') : '');
      let seen = 'Once u';
      for (let reload = 0; reload < 3; reload += 1) {
        await expect.poll(shown, { timeout: WAIT_MS }).toContain(seen);
        const before = await shown();
        await page.reload();
        // The reloaded page shows what had streamed, from the first word: none of it lost.
        const after = before.slice(before.indexOf('Once'));
        await expect.poll(shown, { timeout: WAIT_MS }).toContain(after.slice(0, Math.min(after.length, 40)));
        seen = after.slice(0, Math.min(after.length, 40));
      }
      await untilStatus(page, 'completed');
      await expect.poll(() => live.count(), { timeout: WAIT_MS }).toBe(0);
      await page.locator('[data-type="thought"]').waitFor({ timeout: WAIT_MS });
    } finally {
      await context.close();
    }
  });

  it("shows a code agent's step as what its code did: its calls and the time and id it recorded, no tokens", async () => {
    const { client, open } = stack();
    await client.submitRun({ runId: 'code-1', agent: { kind: 'agent', name: 'stamper' }, input: 'hi' });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/code-1');
    try {
      await untilStatus(page, 'completed');
      const step = page.locator('.event-row.kind-code', { hasText: 'code stamper: 2 calls' });
      await step.waitFor({ timeout: WAIT_MS });
      const facts = (await step.locator('.facts').textContent()) ?? '';
      expect(facts).toContain('calls echo, echo');
      expect(facts).toMatch(/now \d{4}-\d\d-\d\dT[\d:.]+Z/);
      expect(facts).toMatch(/uuid [0-9a-f-]{36}/);
      expect(facts).not.toContain('tokens');
      // The step that returned: no model was asked, so no "0 in / 0 out tokens".
      await page
        .locator('.event-row.kind-code', { hasText: 'code stamper: completed' })
        .waitFor({ timeout: WAIT_MS });
      expect(await page.locator('.event-row', { hasText: '0 in / 0 out' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
