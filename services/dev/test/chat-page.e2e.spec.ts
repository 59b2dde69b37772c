// The chat example's page (examples/chat: useChat with resume) in Chromium against real services: a code agent
// written with the AI SDK answers through a fake OpenAI-compatible server that streams slowly. The page is
// reloaded three times mid-answer and the worker asking the model (planner and gateway in one process) is
// SIGKILLed once mid-answer and restarted: the page never shows a mix of two attempts and ends with exactly
// the recorded answer. A second message continues the conversation (the earlier answer in its history), and a
// message sent while a turn runs is refused (409). A note the model saves waits for the page's approval,
// shown as a tool part: approved, the gateway saves it and the turn completes.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { decodeJournal } from '@dura/code-agents/engine';
import {
  eventually,
  freePort,
  repoRoot,
  spawnManaged,
  useFakeLlmServer,
  waitForPort,
  type FakeLlmReply,
  type ManagedProcess,
} from '@dura/testing';
import { logOf, useCrashSystem, watchToEnd } from './crash-harness';

const CHROMIUM = process.env['DURA_CHROMIUM'] ?? '/usr/bin/chromium';
const EXAMPLE = join(repoRoot(), 'examples', 'chat');
// The example's own vite, wherever npm installed it.
const VITE = join(
  dirname(createRequire(join(EXAMPLE, 'package.json')).resolve('vite/package.json')),
  'bin',
  'vite.js',
);

const FIRST = Array.from({ length: 30 }, (_, i) => `lost-${i} `).join('');
const KEPT = Array.from({ length: 30 }, (_, i) => `kept-${i} `).join('');
const SECOND_ANSWER = 'The second answer continues the conversation.';
const THIRD = Array.from({ length: 16 }, (_, i) => `third-${i} `).join('');
const REMEMBER = 'remember that I like tea';
const NOTED = 'Noted: you like tea.';

type WireMessage = { role: string; content?: unknown };
const textOf = (m: WireMessage | undefined): string => (typeof m?.content === 'string' ? m.content : '');

/** The third question's answer waits for this. */
let releaseThird = (): void => undefined;
const thirdHeld = new Promise<void>((resolve) => (releaseThird = resolve));
/** How often each question was answered with text (asked after its search). */
const answered = new Map<string, number>();
const llm = useFakeLlmServer({
  provider: 'openai',
  respond: ({ body }): FakeLlmReply | Promise<FakeLlmReply> => {
    const messages = (body as { messages: WireMessage[] }).messages;
    const question = textOf(messages.filter((m) => m.role === 'user').at(-1));
    if (messages.at(-1)?.role !== 'tool')
      return question === REMEMBER
        ? { kind: 'message', toolCalls: [{ name: 'notes_save', arguments: { text: 'likes tea' } }] }
        : { kind: 'message', toolCalls: [{ name: 'research_search', arguments: { query: question } }] };
    if (question === REMEMBER) return { kind: 'message', content: NOTED };
    const n = (answered.get(question) ?? 0) + 1;
    answered.set(question, n);
    if (question === 'tell me a story')
      return n === 1
        ? { kind: 'message', content: FIRST, pieceChars: 4, pieceDelayMs: 150 }
        : { kind: 'message', content: KEPT, pieceChars: 4, pieceDelayMs: 120 };
    if (question === 'take your time')
      // Held until the test has sent its message mid-turn: the turn is surely still running then.
      return thirdHeld.then(() => ({
        kind: 'message',
        content: THIRD,
        pieceChars: 4,
        pieceDelayMs: 120,
      }));
    return { kind: 'message', content: SECOND_ANSWER };
  },
});

const AGENT_ENV = (): Record<string, string> => ({
  DURA_AGENTS: join(EXAMPLE, 'agent.ts'),
  DURA_TOOLS_MODULES: [
    join(repoRoot(), 'examples', 'code-agents', 'tools.ts'),
    join(EXAMPLE, 'tools.ts'),
  ].join(','),
  CHAT_MODEL_URL: llm().url,
});
const crash = useCrashSystem(['worker', 'projector'], {
  env: (name): Record<string, string> => (name === 'worker' ? AGENT_ENV() : {}),
});

let preview: ManagedProcess | undefined;
let browser: Browser | undefined;
let pageUrl = '';
const started = Date.now();

beforeAll(async () => {
  // The page as a user builds and serves it: vite build, then vite preview handing /api to the projector.
  const build = spawnManaged({
    name: 'vite build',
    command: process.execPath,
    args: [VITE, 'build'],
    cwd: EXAMPLE,
  });
  const built = await build.exited;
  expect(built.code, build.output()).toBe(0);
  const port = await freePort();
  preview = spawnManaged({
    name: 'vite preview',
    command: process.execPath,
    args: [VITE, 'preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
    cwd: EXAMPLE,
    env: { DURA_API_URL: crash().system.apiUrl },
  });
  // Its port accepting connections, not its banner: vite colours the banner when it thinks a terminal reads it.
  await waitForPort(port, 60_000);
  pageUrl = `http://127.0.0.1:${port}/?chat=story`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await preview?.kill('SIGTERM');
  console.log(`chat-page.e2e: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

/** The text parts of the page's last answer, as shown. */
async function shownAnswer(page: Page): Promise<string> {
  const texts = page.getByTestId('message-assistant').last().getByTestId('text');
  return (await texts.allTextContents()).join('\n\n');
}

/** Waits until the page's last answer satisfies `ok`; on a timeout, says what the page showed last. */
async function untilShown(page: Page, what: string, ok: (text: string) => boolean): Promise<string> {
  return eventually(
    async () => {
      const text = await shownAnswer(page).catch((error: unknown) => {
        throw new Error(`the page could not be read (${String(error)})`);
      });
      if (ok(text)) return text;
      const users = await page.getByTestId('message-user').count();
      const assistants = await page.getByTestId('message-assistant').count();
      const errors = await page
        .getByTestId('error')
        .allTextContents()
        .catch(() => []);
      throw new Error(
        `the page shows ${JSON.stringify(text.slice(0, 300))} (${users} user and ${assistants} assistant messages; errors: ${JSON.stringify(errors)})`,
      );
    },
    what,
    60_000,
  );
}

/** What the turn's run recorded as the model's answers' text. */
async function recordedAnswer(runId: string): Promise<string> {
  const log = await logOf(crash(), runId);
  return log
    .flatMap((e) => (e.type === 'thought' ? decodeJournal(e.data.content) : []))
    .flatMap((entry) => (entry.k === 'model' && entry.a.content !== '' ? [entry.a.content] : []))
    .join('\n\n');
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('input').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

describe('the useChat page over a durable chat', () => {
  it('survives reloads and a killed worker mid-answer, continues, refuses a message sent mid-turn, and asks the page to approve a note', async () => {
    const sys = crash();
    const page = await browser!.newPage();
    await page.goto(pageUrl);
    await send(page, 'tell me a story');

    // Every sample of the page's answer is a prefix of one attempt: never a mix of the two.
    const samples: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await shownAnswer(page).catch(() => ''));
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    })();

    await untilShown(page, 'the first attempt streaming', (t) => t.length >= 12 && FIRST.startsWith(t));
    await page.reload();
    await untilShown(
      page,
      'the first attempt again after a reload',
      (t) => t.length >= 40 && FIRST.startsWith(t),
    );
    await sys.proc('worker').kill('SIGKILL');
    await sys.restart('worker');
    await untilShown(page, 'the second attempt streaming', (t) => t.length >= 12 && KEPT.startsWith(t));
    await page.reload();
    await untilShown(page, 'the second attempt after a reload', (t) => t.length >= 60 && KEPT.startsWith(t));
    await page.reload();
    const final = await untilShown(page, 'the whole answer', (t) => t === KEPT);
    sampling = false;
    await sampler;

    const turns = (await (await fetch(`${sys.system.apiUrl}/chat/story/messages`)).json()) as {
      turns: { runId: string }[];
    };
    const first = turns.turns[0]!.runId;
    await watchToEnd(sys, first);
    expect(final).toBe(await recordedAnswer(first));
    for (const sample of samples)
      expect(FIRST.startsWith(sample) || KEPT.startsWith(sample), sample).toBe(true);
    expect(answered.get('tell me a story')).toBe(2);

    // The conversation goes on: the next turn's model sees the first answer as history.
    await send(page, 'and then?');
    await untilShown(page, 'the second answer', (t) => t === SECOND_ANSWER);
    const continued = llm().requests.find((r) =>
      (r.body as { messages: WireMessage[] }).messages.some(
        (m) => m.role === 'user' && textOf(m) === 'and then?',
      ),
    );
    expect((continued?.body as { messages: WireMessage[] }).messages.map((m) => [m.role, textOf(m)])).toEqual(
      expect.arrayContaining([
        ['user', 'tell me a story'],
        ['assistant', KEPT],
      ]),
    );

    // Double-texting: a message sent while the turn runs is refused (the default policy), the turn goes on.
    // The model holds its answer, so the turn is running when the second message is sent.
    await send(page, 'take your time');
    await eventually(
      () => Promise.resolve(answered.get('take your time') === 1 || undefined),
      'the third turn to ask the model for its answer',
      60_000,
    );
    await send(page, 'are you there?');
    await expect
      .poll(() => page.getByTestId('error').textContent(), { timeout: 60_000 })
      .toContain('still running');
    releaseThird();
    const chat = await eventually(
      async () => {
        const body = (await (await fetch(`${sys.system.apiUrl}/chat/story/messages`)).json()) as {
          turns: { runId: string; status: string }[];
        };
        return body.turns.at(-1)?.status === 'completed' ? body : undefined;
      },
      'the third turn completed',
      60_000,
    );
    expect(chat.turns).toHaveLength(3);
    await page.reload();
    await untilShown(page, 'the third answer after a reload', (t) => t === THIRD);
    expect(await page.getByTestId('message-user').allTextContents()).toEqual([
      'Youtell me a story',
      'Youand then?',
      'Youtake your time',
    ]);

    // An approval in the chat: the note the model saves waits for the page; approved, the gateway saves it.
    await send(page, REMEMBER);
    // A tool part is named by the Dura tool's name.
    const note = page
      .getByTestId('message-assistant')
      .last()
      .getByTestId('tool')
      .filter({ hasText: 'notes.save' });
    const stateOf = (): Promise<string | null> => note.getAttribute('data-state', { timeout: 1_000 });
    await expect.poll(stateOf, { timeout: 60_000 }).toBe('approval-requested');
    await note.getByRole('button', { name: 'Approve' }).click();
    await untilShown(page, 'the answer after the approval', (t) => t === NOTED);
    await expect.poll(stateOf, { timeout: 60_000 }).toBe('output-available');
    const approved = await eventually(
      async () => {
        const body = (await (await fetch(`${sys.system.apiUrl}/chat/story/messages`)).json()) as {
          turns: { runId: string; status: string }[];
        };
        return body.turns.length === 4 && body.turns.at(-1)?.status === 'completed' ? body : undefined;
      },
      'the fourth turn completed',
      60_000,
    );
    const log = await watchToEnd(sys, approved.turns.at(-1)!.runId);
    expect(log.filter((e) => e.type === 'signal_received').map((e) => e.data.name)).toEqual(['approve']);
    expect(log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data.result] : [])).at(-1)).toEqual({
      saved: 'likes tea',
    });
  });

  it("docs/chat.md's and docs/ai-sdk.md's examples are the example's code", async () => {
    const doc = await readFile(join(repoRoot(), 'docs', 'chat.md'), 'utf8');
    const shown = /```tsx\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(shown).toBeDefined();
    expect(await readFile(join(EXAMPLE, 'src', 'App.tsx'), 'utf8')).toContain(shown!.trimEnd());
    // The approval option as both pages show it is the agent's line.
    const agent = await readFile(join(EXAMPLE, 'agent.ts'), 'utf8');
    for (const page of ['chat.md', 'ai-sdk.md']) {
      const text = await readFile(join(repoRoot(), 'docs', page), 'utf8');
      const approval = /```ts\n(.*needsApproval.*)\n```/.exec(text)?.[1];
      expect(approval, page).toBeDefined();
      expect(agent, page).toContain(approval!.trim());
    }
  });
});
