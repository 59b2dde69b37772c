// The console's Schedules & triggers page in Debian's Chromium against a real stack (planner, gateway and
// projector processes, NATS, Postgres): creating, pausing, triggering and deleting a schedule, creating and
// deleting an event trigger, sending an event that starts a run, and a read-only token that sees no action and
// is refused when it forces one. The screenshot docs/images/console-schedules.png is taken here.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, TOKENS, useConsoleStack } from './console-stack';

const stack = useConsoleStack();
const WAIT_MS = 60_000;

/** A call to the API as `token` would make it, with its status and JSON answer. */
async function call(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(stack().apiUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

const scheduleRow = (page: Page, id: string) => page.locator(`[data-schedule-id="${id}"]`);
const triggerRow = (page: Page, id: string) => page.locator(`[data-trigger-id="${id}"]`);

/** What the page answered the last action, once it says `expected`. */
async function notice(page: Page, expected: RegExp): Promise<string> {
  const status = page.getByTestId('schedules-message');
  await expect
    .poll(async () => (await status.textContent().catch(() => '')) ?? '', { timeout: WAIT_MS })
    .toMatch(expected);
  return (await status.textContent()) ?? '';
}

async function createSchedule(
  page: Page,
  fields: { id: string; timing: 'cron' | 'every'; when: string; zone?: string; input?: string },
) {
  const form = page.getByRole('form', { name: 'Create a schedule' });
  await form.getByLabel('Schedule id').fill(fields.id);
  await form.getByLabel('Schedule agent').fill('stamper');
  await form.getByLabel('Timing').selectOption(fields.timing);
  await form
    .getByLabel(fields.timing === 'cron' ? 'Cron expression' : 'Interval in seconds')
    .fill(fields.when);
  if (fields.zone) await form.getByLabel('Time zone').fill(fields.zone);
  if (fields.input) await form.getByLabel('Schedule input (JSON)').fill(fields.input);
  await form.getByRole('button', { name: 'Create schedule' }).click();
  await scheduleRow(page, fields.id).waitFor({ timeout: WAIT_MS });
}

async function runStatus(runId: string): Promise<string | undefined> {
  const { status, body } = await call(TOKENS.operator, 'GET', `/runs/${runId}`);
  return status === 200 ? (body['status'] as string) : undefined;
}

describe('the Schedules & triggers page', () => {
  it('creates a schedule and pauses, triggers, resumes and deletes it from the page; the API agrees', async () => {
    const { page, context } = await stack().open(TOKENS.operator, '/ui/');
    try {
      await page.getByRole('link', { name: 'Schedules & triggers' }).click();
      await page.getByRole('heading', { name: 'Schedules & triggers' }).waitFor({ timeout: WAIT_MS });
      expect(await page.title()).toBe('Schedules & triggers · Dura Console');
      await createSchedule(page, {
        id: 'nightly_stamp',
        timing: 'cron',
        when: '30 2 * * *',
        zone: 'Europe/Paris',
        input: '"nightly"',
      });
      await createSchedule(page, {
        id: 'hourly_stamp',
        timing: 'every',
        when: '3600',
        input: '{"every": "hour"}',
      });
      const hourly = scheduleRow(page, 'hourly_stamp');
      expect(await hourly.getByTestId('next-tick').textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:00:00$/);
      expect(await scheduleRow(page, 'nightly_stamp').textContent()).toContain(
        'cron 30 2 * * * (Europe/Paris)',
      );

      await hourly.getByRole('button', { name: 'Pause' }).click();
      await page
        .locator('[data-schedule-id="hourly_stamp"][data-paused="true"]')
        .waitFor({ timeout: WAIT_MS });
      const paused = await call(TOKENS.operator, 'GET', '/schedules/hourly_stamp');
      expect(paused.body).toMatchObject({
        paused: true,
        next: [],
        spec: { everyMs: 3_600_000, request: { input: { every: 'hour' } } },
      });

      // Trigger now: its run starts (a planner publishes it) and shows among the schedule's recent runs.
      await scheduleRow(page, 'nightly_stamp').getByRole('button', { name: 'Trigger now' }).click();
      const runId =
        /Started run (sch-nightly_stamp-\S+)\./.exec(
          await notice(page, /^Started run sch-nightly_stamp-/),
        )?.[1] ?? '';
      await scheduleRow(page, 'nightly_stamp')
        .getByRole('link', { name: runId })
        .waitFor({ timeout: WAIT_MS });
      await expect.poll(() => runStatus(runId), { timeout: WAIT_MS }).toBe('completed');

      await hourly.getByRole('button', { name: 'Resume' }).click();
      await page
        .locator('[data-schedule-id="hourly_stamp"][data-paused="false"]')
        .waitFor({ timeout: WAIT_MS });
      expect((await call(TOKENS.operator, 'GET', '/schedules/hourly_stamp')).body['paused']).toBe(false);
      await hourly.getByRole('button', { name: 'Pause' }).click();
      await page
        .locator('[data-schedule-id="hourly_stamp"][data-paused="true"]')
        .waitFor({ timeout: WAIT_MS });

      await createSchedule(page, { id: 'doomed_stamp', timing: 'every', when: '60' });
      const doomed = scheduleRow(page, 'doomed_stamp');
      await doomed.getByRole('button', { name: 'Delete' }).click();
      // The first click only asks.
      expect((await call(TOKENS.operator, 'GET', '/schedules/doomed_stamp')).status).toBe(200);
      await doomed.getByRole('button', { name: 'Really delete' }).click();
      await doomed.waitFor({ state: 'detached', timeout: WAIT_MS });
      expect((await call(TOKENS.operator, 'GET', '/schedules/doomed_stamp')).status).toBe(404);
    } finally {
      await context.close();
    }
  });

  it('creates an event trigger, sends an event that starts its run, and deletes a trigger', async () => {
    const { page, context } = await stack().open(TOKENS.operator, '/ui/schedules');
    try {
      const createTrigger = async (id: string, subject: string) => {
        const form = page.getByRole('form', { name: 'Create an event trigger' });
        await form.getByLabel('Trigger id').fill(id);
        await form.getByLabel('Trigger subject').fill(subject);
        await form.getByLabel('Trigger agent').fill('stamper');
        await form.getByRole('button', { name: 'Create trigger' }).click();
        await triggerRow(page, id).waitFor({ timeout: WAIT_MS });
      };
      await createTrigger('orders', 'dura.event.orders.>');
      await createTrigger('doomed', 'dura.event.doomed');
      expect(await triggerRow(page, 'orders').textContent()).toContain('dura.event.orders.>');

      const send = page.getByRole('form', { name: 'Send event' });
      await send.getByLabel('Event subject').fill('dura.event.orders.created');
      await send.getByLabel('Event payload (JSON)').fill('{"order": 42}');
      await send.getByLabel('Event id (optional)').fill('order-42');
      await send.getByRole('button', { name: 'Send event' }).click();
      await notice(page, /^Sent event order-42 on dura\.event\.orders\.created/);
      await expect.poll(() => runStatus('trg-orders-order-42'), { timeout: WAIT_MS }).toBe('completed');
      const run = await call(TOKENS.operator, 'GET', '/runs/trg-orders-order-42');
      expect(run.body).toMatchObject({ request: { input: { order: 42 } } });
      await screenshot(page, 'schedules');
      // A bad payload is refused by the page before anything is sent.
      await send.getByLabel('Event payload (JSON)').fill('{order: 43}');
      await send.getByRole('button', { name: 'Send event' }).click();
      await notice(page, /The payload must be JSON/);

      await triggerRow(page, 'doomed').getByRole('button', { name: 'Delete' }).click();
      await triggerRow(page, 'doomed').getByRole('button', { name: 'Really delete' }).click();
      await triggerRow(page, 'doomed').waitFor({ state: 'detached', timeout: WAIT_MS });
      expect((await call(TOKENS.operator, 'GET', '/triggers/doomed')).status).toBe(404);
      await send.getByLabel('Event payload (JSON)').fill('{"order": 42}');
      await send.getByRole('button', { name: 'Send event' }).click();
      await notice(page, /already sent/);
    } finally {
      await context.close();
    }
  });

  it('shows a read-only token the schedules and triggers but no action, and the API refuses them when forced', async () => {
    const { page, context } = await stack().open(TOKENS.reader, '/ui/schedules');
    try {
      await scheduleRow(page, 'nightly_stamp').waitFor({ timeout: WAIT_MS });
      await triggerRow(page, 'orders').waitFor({ timeout: WAIT_MS });
      for (const name of [
        'Pause',
        'Resume',
        'Trigger now',
        'Delete',
        'Create schedule',
        'Create trigger',
        'Send event',
      ])
        expect(await page.getByRole('button', { name }).count(), name).toBe(0);
      expect(await page.getByRole('form').count()).toBe(0);
      const forced = await page.evaluate(
        async ({ url, token }) => {
          const send = (method: string, path: string, body?: unknown) =>
            fetch(url + path, {
              method,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            }).then((r) => r.status);
          const request = { v: 1, agent: { kind: 'agent', name: 'stamper' } };
          return [
            await send('POST', '/schedules', { id: 'forced', everyMs: 60_000, request }),
            await send('POST', '/schedules/nightly_stamp/pause', {}),
            await send('POST', '/schedules/nightly_stamp/trigger', {}),
            await send('DELETE', '/schedules/nightly_stamp'),
            await send('POST', '/triggers', { id: 'forced', subject: 'dura.event.forced', request }),
            await send('DELETE', '/triggers/orders'),
            await send('POST', '/events', { subject: 'dura.event.orders.created', payload: { order: 1 } }),
          ];
        },
        { url: stack().apiUrl, token: TOKENS.reader },
      );
      expect(forced).toEqual([403, 403, 403, 403, 403, 403, 403]);
      const schedule = await call(TOKENS.operator, 'GET', '/schedules/nightly_stamp');
      expect(schedule.body['paused']).toBe(false);
      expect((await call(TOKENS.operator, 'GET', '/triggers/orders')).status).toBe(200);
      expect((await call(TOKENS.operator, 'GET', '/schedules/forced')).status).toBe(404);
    } finally {
      await context.close();
    }
  });
});
