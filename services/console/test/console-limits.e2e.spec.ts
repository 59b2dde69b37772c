// The Limits page of the console in Chromium against the real stack of console-stack.ts, with a model limit
// declared on the planner: the page shows the declaration and the state of each limit, refreshed by itself;
// a run waiting for a concurrency key another run holds links its capacity reason to the page.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TOKENS, useConsoleStack, WAIT_MS } from './console-stack';

const LIMITS = [{ model: 'openai/fake-1', requestsPerMinute: 600, concurrentCalls: 5 }];
const stack = useConsoleStack({ plannerEnv: { DURA_MODEL_LIMITS: JSON.stringify(LIMITS) } });
const concurrency = { key: 'customer:42', limit: 1 };

/** The cells of the row whose first cell is `limit`, once the page shows `expected` in it. */
async function rowShowing(page: Page, limit: string, expected: RegExp): Promise<string[]> {
  const row = page.locator('[data-testid="limit-row"]', { has: page.locator('td', { hasText: limit }) });
  await row.filter({ hasText: expected }).waitFor({ timeout: WAIT_MS });
  return row.locator('td').allInnerTexts();
}

describe('the limits page', () => {
  it('shows the declared limit and a run waiting for capacity, linked from the waiting run', async () => {
    const { client, open, script } = stack();
    // The holder: its echo waits for a human, so it keeps the key; the second run waits for the key.
    const holding = 'Echo 7 for customer 42.';
    script(holding, () => ({
      kind: 'message',
      content: 'Echoing.',
      toolCalls: [{ name: 'echo', arguments: { amount: 7 } }],
    }));
    await client.submitRun({
      runId: 'key-holder',
      agent: { kind: 'agent', name: 'cashier' },
      input: holding,
      concurrency,
    });
    const { page, context } = await open(TOKENS.reader, '/ui/');
    try {
      await page.getByRole('link', { name: 'Limits' }).click();
      await rowShowing(page, 'openai/fake-1', /600 req\/min, 5 concurrent/);
      // Settled once the holder's model call is over: its run waits on its echo, no call in flight.
      const modelRow = page.locator('[data-testid="limit-row"]', { has: page.getByText('openai/fake-1') });
      await expect
        .poll(() => modelRow.locator('td').allInnerTexts(), { timeout: WAIT_MS })
        .toEqual([
          'openai/fake-1',
          '600 req/min, 5 concurrent',
          expect.stringMatching(/^req \d+%$/),
          '0/5',
          '0',
          'no',
        ]);
      expect(await page.title()).toBe('Limits · Dura Console');
      // The holder's key shows up without a reload: the page reads the limits again by itself.
      expect(await rowShowing(page, 'concurrency key customer:42', /1\/1/)).toEqual([
        'concurrency key customer:42',
        '1 at once',
        '-',
        '1/1',
        '0',
        'no',
      ]);

      await client.submitRun({
        runId: 'key-waiter',
        agent: { kind: 'agent', name: 'talker' },
        input: 'Hello.',
        concurrency,
      });
      expect((await rowShowing(page, 'concurrency key customer:42', /1 for a slot/))[4]).toBe(
        '1 (1 for a slot)',
      );

      await page.goto(`${stack().apiUrl}/ui/runs/key-waiter`);
      const reason = page.getByRole('link', { name: 'capacity of concurrency key customer:42 (limit 1)' });
      await reason.waitFor({ timeout: WAIT_MS });
      await reason.click();
      await page.locator('[data-testid="limits"]').waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).pathname).toBe('/ui/limits');
    } finally {
      await context.close();
      await client.cancel('key-holder', { reason: 'test over' }).catch(() => undefined);
      await client.cancel('key-waiter', { reason: 'test over' }).catch(() => undefined);
    }
  });
});
