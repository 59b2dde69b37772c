// "Fork with edited state" in Debian's Chromium against a real stack (console-stack.ts): forking a run with an
// edited tool result from its page and seeing the fork complete from the edited value, with the edit shown;
// a read-only token sees no such action and is refused when it forces one. Takes docs/images/console-fork-edit.png.
import { describe, expect, it } from 'vitest';
import { screenshot, TOKENS, untilEventsToEnd, untilStatus, useConsoleStack, WAIT_MS } from './console-stack';

const stack = useConsoleStack();

/** Quote a price (echo), then pay what the quote said: the run's output is what step 2 paid. */
async function quoteThenPay(runId: string): Promise<void> {
  const { client } = stack();
  await client.submitRun({
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'echo', args: { price: 100 } },
        { tool: 'echo', args: { paid: '$steps.1.price' } },
      ],
      output: '$steps.2',
    },
    tags: ['console-fork'],
  });
  for await (const event of client.watchRun(runId)) if (event.type === 'run_completed') break;
}

describe('fork with edited state, from the console', () => {
  it('forks a run with an edited tool result: the fork completes from the edited value and shows the edit', async () => {
    const { client, open } = stack();
    await quoteThenPay('quote-1');
    const { page, context } = await open(TOKENS.operator, '/ui/runs/quote-1');
    try {
      await untilStatus(page, 'completed');
      await untilEventsToEnd(page);
      const result = page.locator('[data-type="tool_call_completed"]').first();
      await page.getByTestId('step-picker').fill((await result.getAttribute('data-n')) ?? '');
      await page.getByRole('button', { name: 'Fork with edited result of call-1' }).click();
      const editor = page.getByLabel('Edited the result of call-1 (JSON)');
      expect(JSON.parse(await editor.inputValue())).toEqual({ price: 100 });

      await editor.fill('{"price": ');
      await page.getByRole('button', { name: 'Fork with this result' }).click();
      await expect
        .poll(() => page.getByTestId('fork-edit-error').textContent(), { timeout: WAIT_MS })
        .toContain('the result of call-1 must be JSON');

      await editor.fill('{"price": 90}');
      await page.getByRole('button', { name: 'Fork with this result' }).click();
      await page.waitForURL(/\/ui\/runs\/fork_/, { timeout: WAIT_MS });
      await untilStatus(page, 'completed');
      const forkId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1) ?? '');
      expect((await client.getRun(forkId)).output).toEqual({ paid: 90 });
      await expect
        .poll(() => page.getByTestId('run-output').textContent(), { timeout: WAIT_MS })
        .toContain('{"paid":90}');
      const edited = page.getByTestId('fork-edited');
      await expect
        .poll(() => edited.textContent(), { timeout: WAIT_MS })
        .toMatch(
          /Edited result of call-1 by operator \(from seq \d+ of quote-1, replaced sha256 [0-9a-f]{12}…\)/,
        );
      expect(await page.getByTestId('fork-origin').locator('a').getAttribute('href')).toBe(
        '/ui/runs/quote-1',
      );

      // The edited observation is in the fork's log as what it is.
      await untilEventsToEnd(page);
      const copy = page.locator('[data-type="tool_call_completed"]').first();
      expect(await copy.textContent()).toContain('edited by operator in a fork');
      await page.getByTestId('step-picker').fill((await copy.getAttribute('data-n')) ?? '');
      await expect
        .poll(() => page.getByTestId('event-detail').textContent(), { timeout: WAIT_MS })
        .toContain('"by": "operator"');
      await screenshot(page, 'fork-edit');
    } finally {
      await context.close();
    }
  });

  it('shows a read-only token no fork action, and the API refuses a forced one', async () => {
    const { apiUrl, open } = stack();
    await quoteThenPay('quote-ro');
    const { page, context } = await open(TOKENS.reader, '/ui/runs/quote-ro');
    try {
      await untilStatus(page, 'completed');
      await untilEventsToEnd(page);
      const result = page.locator('[data-type="tool_call_completed"]').first();
      await page.getByTestId('step-picker').fill((await result.getAttribute('data-n')) ?? '');
      await page.getByTestId('event-detail').waitFor({ timeout: WAIT_MS });
      expect(await page.getByTestId('fork-edits').count()).toBe(0);
      expect(await page.getByRole('button', { name: /^Fork/ }).count()).toBe(0);
      const seq = Number(await result.getAttribute('data-seq'));
      const forced = await page.evaluate(
        async ({ url, token, atSeq }) => {
          const response = await fetch(`${url}/runs/quote-ro/fork`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ atSeq, edit: { toolResult: { callId: 'call-1', output: { price: 1 } } } }),
          });
          return response.status;
        },
        { url: apiUrl, token: TOKENS.reader, atSeq: seq },
      );
      expect(forced).toBe(403);
    } finally {
      await context.close();
    }
  });
});
