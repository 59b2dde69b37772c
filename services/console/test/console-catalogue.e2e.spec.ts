// The catalogue page of the console in Chromium against the real stack of console-stack.ts: it lists the
// agents the planner announces and the tools the gateway runs; a token with scope submit starts a run from
// the form generated from an agent's input schema (errors shown inline first) and lands on the run, which
// completes; a read-only token sees no form, and the API refuses its forced POST /runs with 403. Screenshots:
// docs/images/console-catalogue.png and docs/images/console-start-run.png.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { repoRoot } from '@dura/testing';
import { TOKENS, useConsoleStack } from './console-stack';

const stack = useConsoleStack();
const WAIT_MS = 60_000;

async function screenshot(page: Page, name: string): Promise<void> {
  const images = join(repoRoot(), 'docs', 'images');
  await mkdir(images, { recursive: true });
  await page.screenshot({ path: join(images, `console-${name}.png`), fullPage: true });
}

const cell = (page: Page, row: string, testId: string) => page.locator(`${row} [data-testid="${testId}"]`);

describe('the catalogue page', () => {
  it("lists the stack's agents with versions, kind and input schema, and its tools with safety class and limits", async () => {
    const { open } = stack();
    const { page, context } = await open(TOKENS.operator);
    try {
      await page.getByRole('link', { name: 'Agents and tools' }).click();
      await page.locator('tr[data-agent="greeter"]').waitFor({ timeout: WAIT_MS });
      expect(await page.title()).toBe('Agents and tools · Dura Console');
      const agents = await page
        .locator('tr[data-agent]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-agent')));
      // The stack's agents (JSON and code), in name order.
      expect(agents).toEqual(expect.arrayContaining(['cashier', 'greeter', 'stamper', 'talker']));
      expect(agents).toEqual([...agents].sort());
      expect(await cell(page, 'tr[data-agent="talker"]', 'kind').textContent()).toBe('llm');
      expect(await cell(page, 'tr[data-agent="greeter"]', 'kind').textContent()).toBe('code');
      expect(await cell(page, 'tr[data-agent="greeter"]', 'versions').textContent()).toBe('2');
      // The input schema the planner derived from the code agent's zod schema.
      await page.locator('tr[data-agent="greeter"] details summary').click();
      const schema = JSON.parse(
        (await page.locator('tr[data-agent="greeter"] pre.schema').textContent()) ?? '{}',
      ) as { properties: Record<string, unknown>; required: string[] };
      expect(Object.keys(schema.properties)).toEqual(['name', 'times', 'loud', 'tone', 'address']);
      expect(await page.locator('tr[data-agent="stamper"] pre.schema').count()).toBe(0);
      // Tools: the built-in demo tools with their safety classes and the gateway's limits.
      await page.locator('tr[data-tool="echo"]').waitFor({ timeout: WAIT_MS });
      expect(await cell(page, 'tr[data-tool="echo"]', 'safety').textContent()).toBe('read only');
      expect(await cell(page, 'tr[data-tool="demo.deploy"]', 'safety').textContent()).toBe('unsafe');
      expect(await cell(page, 'tr[data-tool="echo"]', 'concurrency').textContent()).toBe('unlimited');
      expect(await cell(page, 'tr[data-tool="echo"]', 'approval').textContent()).toBe('no');
      await screenshot(page, 'catalogue');
    } finally {
      await context.close();
    }
  });

  it('starts a run from the form built from the input schema, after showing what is missing', async () => {
    const { open, client } = stack();
    const { page, context } = await open(TOKENS.operator, '/ui/agents');
    try {
      const form = page.getByTestId('start-run');
      await form.waitFor({ timeout: WAIT_MS });
      await form.locator('select[name="agent"]').selectOption('greeter');
      await form.locator('[name="name"]').fill('Ada');
      await form.locator('[name="times"]').fill('2.5');
      await form.locator('[name="tone"]').selectOption({ label: 'formal' });
      await form.getByRole('button', { name: 'Start run' }).click();
      // Nothing is sent while fields are wrong: each says what is wrong with it.
      await form.locator('[data-error-for="times"]').waitFor({ timeout: WAIT_MS });
      expect(await form.locator('[data-error-for="times"]').textContent()).toBe('must be a whole number');
      expect(await form.locator('[data-error-for="address.city"]').textContent()).toBe('required');
      expect(page.url()).toMatch(/\/ui\/agents$/);
      await screenshot(page, 'start-run');
      await form.locator('[name="times"]').fill('2');
      await form.locator('[name="address.city"]').fill('Lyon');
      await form.locator('[name="loud"]').check();
      // An edited field's error goes with the edit.
      expect(await form.locator('[data-error-for]').count()).toBe(0);
      await form.getByRole('button', { name: 'Start run' }).click();
      await page.waitForURL(/\/ui\/runs\/run_[0-9a-f]+$/, { timeout: WAIT_MS });
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: WAIT_MS });
      const runId = decodeURIComponent(page.url().split('/').at(-1) ?? '');
      const run = await client.getRun(runId);
      expect(run.status).toBe('completed');
      expect(run.request?.agent).toEqual({ kind: 'agent', name: 'greeter' });
      expect(run.request?.input).toEqual({
        name: 'Ada',
        times: 2,
        loud: true,
        tone: 'formal',
        address: { city: 'Lyon' },
      });
      expect(run.output).toEqual({ greeting: ['GOOD DAY ADA OF LYON', 'GOOD DAY ADA OF LYON'] });
    } finally {
      await context.close();
    }
  });

  it('shows a read-only token the catalogue but no start form, and refuses its forced POST /runs', async () => {
    const { open, apiUrl } = stack();
    const { page, context } = await open(TOKENS.reader, '/ui/agents');
    try {
      await page.locator('tr[data-agent="greeter"]').waitFor({ timeout: WAIT_MS });
      await page.locator('tr[data-tool="echo"]').waitFor({ timeout: WAIT_MS });
      expect(await page.getByTestId('start-run').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Start a run…' }).count()).toBe(0);
      const forced = await page.evaluate(
        async ({ url, token }) =>
          (
            await fetch(`${url}/runs`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify({ agent: { kind: 'agent', name: 'greeter' }, input: {} }),
            })
          ).status,
        { url: apiUrl, token: TOKENS.reader },
      );
      expect(forced).toBe(403);
    } finally {
      await context.close();
    }
  });
});
