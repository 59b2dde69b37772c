// An OpenAI-compatible model for the chat example, offline: it searches the library once for each new user
// message (or, asked to remember something, saves it as a note, which the page approves first), then streams an
// answer a few characters at a time (slowly enough to reload the page mid-answer).
// npm run fake-model -w @dura/example-chat   (listens on CHAT_FAKE_PORT, default 11435)
import { createServer } from 'node:http';

type Message = { role: string; content?: unknown };

const port = Number(process.env.CHAT_FAKE_PORT ?? 11435);
const pieceMs = Number(process.env.CHAT_FAKE_PIECE_MS ?? 60);

function answer(messages: Message[]): { text: string } | { call: string; args: Record<string, string> } {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const asked = typeof lastUser?.content === 'string' ? lastUser.content : 'your question';
  const searched = messages.at(-1)?.role === 'tool';
  if (!searched && /^remember\b/i.test(asked)) return { call: 'notes_save', args: { text: asked } };
  if (!searched) return { call: 'research_search', args: { query: asked } };
  const turn = messages.filter((m) => m.role === 'user').length;
  return {
    text: `Answer ${turn}: you asked "${asked}". Durable execution records each step, so a crashed run resumes where it stopped, and this text survives a reload of the page.`,
  };
}

const sse = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'fake',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'fake-chat',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

createServer((req, res) => {
  let body = '';
  req.on('data', (piece: Buffer) => (body += piece.toString()));
  req.on('end', () => {
    void (async () => {
      const { messages } = JSON.parse(body) as { messages: Message[] };
      const reply = answer(messages);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if ('call' in reply) {
        const call = { index: 0, id: `call_${Date.now()}`, type: 'function' };
        const args = JSON.stringify(reply.args);
        res.write(
          sse(
            chunk({
              role: 'assistant',
              tool_calls: [{ ...call, function: { name: reply.call, arguments: args } }],
            }),
          ),
        );
        res.write(sse(chunk({}, 'tool_calls')));
      } else {
        for (let i = 0; i < reply.text.length; i += 4) {
          res.write(sse(chunk({ content: reply.text.slice(i, i + 4) })));
          await new Promise((resolve) => setTimeout(resolve, pieceMs));
        }
        res.write(sse(chunk({}, 'stop')));
      }
      res.end('data: [DONE]\n\n');
    })();
  });
}).listen(port, '127.0.0.1', () => console.log(`fake chat model on http://127.0.0.1:${port}/v1`));
