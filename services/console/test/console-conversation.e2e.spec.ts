// The run page's conversation view in Debian's Chromium against a real stack (planner, gateway and projector
// processes, NATS, Postgres, the fake model): a JSON agent that asks for a tool and then answers, read as a
// chat while it runs and after; a code agent's ctx.loop; and no conversation for a run that asked no model.
// The docs' picture of it (docs/images/console-conversation.png) is taken here.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { repoRoot } from '@dura/testing';
import { TOKENS, useConsoleStack } from './console-stack';

const stack = useConsoleStack();
const WAIT_MS = 60_000;

/** The chat's messages as `role: text` lines, in order. */
const messages = (page: Page) =>
  page
    .locator('[data-testid="conversation"] .msg')
    .evaluateAll((items) =>
      items.map(
        (item) =>
          `${item.getAttribute('data-role')}: ${item.querySelector('.content, summary')?.textContent ?? ''}`,
      ),
    );

const roles = (page: Page) =>
  page
    .locator('[data-testid="conversation"] .msg')
    .evaluateAll((items) => items.map((item) => item.getAttribute('data-role')));

describe('the conversation view', () => {
  it('shows a JSON agent run as a chat: system, user, the tool call with its arguments, its result, the answer', async () => {
    const { client, open, script } = stack();
    const input = 'What is the weather in Oslo?';
    script(input, (n) =>
      n === 0
        ? {
            kind: 'message',
            content: 'Let me look that up.',
            toolCalls: [{ name: 'echo', arguments: { city: 'Oslo', unit: 'celsius' } }],
            usage: { inputTokens: 41, outputTokens: 12 },
          }
        : // Held back, so the page is watched while the run goes on.
          {
            kind: 'message',
            content: 'Oslo: -3 °C and clear.',
            usage: { inputTokens: 73, outputTokens: 9 },
            delayMs: 3_000,
          },
    );
    await client.submitRun({ runId: 'chat-1', agent: { kind: 'agent', name: 'forecaster' }, input });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/chat-1');
    try {
      // The tab appears once the run has talked to the model.
      const tab = page.getByRole('tab', { name: 'Conversation' });
      await tab.waitFor({ timeout: WAIT_MS });
      await tab.click();
      const chat = page.getByTestId('conversation');
      await chat.locator('.msg[data-role="tool"]').waitFor({ timeout: WAIT_MS });
      // Live: the answer joins the chat without a reload once it is recorded (and the text it streams, shown
      // while the model answers, is gone: it is an assistant message too, cut where the stream is).
      await expect
        .poll(async () => [await roles(page), await page.getByTestId('chat-answering').count()], {
          timeout: WAIT_MS,
        })
        .toEqual([['system', 'user', 'assistant', 'tool', 'assistant'], 0]);
      const [system, user, asked, result, answer] = await messages(page);
      expect(system).toBe('system: You forecast the weather; look it up with echo first.');
      expect(user).toBe(`user: ${input}`);
      expect(asked).toBe('assistant: Let me look that up.');
      expect(result).toBe('tool: {\n  "city": "Oslo",\n  "unit": "celsius"\n}');
      expect(answer).toBe('assistant: Oslo: -3 °C and clear.');

      // The call, folded: its name and arguments; unfolded, the arguments in full and a link to its result.
      // Unfolded once the run has ended: the page takes the run's last events in meanwhile, and a read of
      // the arguments right after the click was seen to read nothing on a loaded machine.
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: WAIT_MS });
      const call = chat.getByTestId('chat-tool-call');
      expect(await call.locator('summary').innerText()).toBe('echo({"city":"Oslo","unit":"celsius"})');
      await call.locator('summary').click();
      await call.getByTestId('chat-tool-args').waitFor({ state: 'visible', timeout: WAIT_MS });
      expect(JSON.parse(await call.getByTestId('chat-tool-args').innerText())).toEqual({
        city: 'Oslo',
        unit: 'celsius',
      });
      const callId = await call.getAttribute('data-call-id');
      expect(await chat.locator('.msg[data-role="tool"]').getAttribute('data-call-id')).toBe(callId);
      await call.getByRole('button', { name: 'go to its result' }).click();
      // Each answer says what it cost (the fake provider's usage, as the thought recorded it).
      const usage = await chat.getByTestId('chat-usage').allInnerTexts();
      expect(usage[0]).toMatch(/fake-1 · 41 in \/ 12 out tokens/);
      expect(usage[1]).toMatch(/fake-1 · 73 in \/ 9 out tokens .*stop/);
      // A message links to its event: the tool's result is the call's completion in the timeline.
      await chat.locator('.msg[data-role="tool"] .event-link').click();
      await expect
        .poll(() => page.getByTestId('event-detail').locator('h2').innerText(), { timeout: WAIT_MS })
        .toMatch(/^#\d+ tool_call_completed$/);
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: WAIT_MS });
      await page.screenshot({ path: join(repoRoot(), 'docs', 'images', 'console-conversation.png') });
      // The events view is one click back.
      await page.getByRole('tab', { name: 'Events' }).click();
      await page.locator('[data-type="thought"]').first().waitFor({ timeout: WAIT_MS });
    } finally {
      await context.close();
    }
  });

  it("shows a code agent's ctx.loop as one conversation, its history not repeated", async () => {
    const { client, open, script } = stack();
    const input = 'Echo the word durable, then say done.';
    script(input, (n) =>
      n === 0
        ? { kind: 'message', toolCalls: [{ id: 'call_1', name: 'echo', arguments: { word: 'durable' } }] }
        : { kind: 'message', content: 'done: durable' },
    );
    await client.submitRun({ runId: 'chat-code-1', agent: { kind: 'agent', name: 'looper' }, input });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/chat-code-1');
    try {
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: WAIT_MS });
      await page.getByRole('tab', { name: 'Conversation' }).click();
      await expect
        .poll(() => messages(page), { timeout: WAIT_MS })
        .toEqual([
          'system: You loop over echo.',
          `user: ${input}`,
          'assistant: echo({"word":"durable"})',
          'tool: {"word":"durable"}',
          'assistant: done: durable',
        ]);
      expect(await page.getByTestId('conversation').locator('h2').innerText()).toMatch(
        /^Conversation · 2 model calls$/,
      );
    } finally {
      await context.close();
    }
  });

  it('offers no conversation for a run that asked no model', async () => {
    const { client, open } = stack();
    await client.submitRun({
      runId: 'chat-none-1',
      agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { n: 1 } }], output: '$steps.1' },
    });
    const { page, context } = await open(TOKENS.operator, '/ui/runs/chat-none-1');
    try {
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: WAIT_MS });
      await page.locator('[data-type="run_completed"]').waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole('tab', { name: 'Conversation' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
