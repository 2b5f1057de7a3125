// A local server answering as an OpenAI-compatible chat-completions endpoint documents it:
// POST /v1/chat/completions with {model, messages} answers {id, object: "chat.completion", created,
// model, choices: [{index, message: {role: "assistant", content}, finish_reason}], usage}. Tests
// decide what the "model" writes from the prompt it got.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestLlmServer {
  /** Base URL to configure (…/v1). */
  url: string;
  /** What the model answers, from the user prompt (the facts); a number answers that HTTP status. */
  reply: (prompt: string) => string | number;
  prompts: string[];
  close(): Promise<void>;
}

export async function startLlmServer(): Promise<TestLlmServer> {
  const state: TestLlmServer = { url: '', reply: () => 'No reply set.', prompts: [], close: async () => undefined };
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Not found', type: 'invalid_request_error' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; messages: { role: string; content: string }[] };
      const prompt = body.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
      state.prompts.push(prompt);
      const answer = state.reply(prompt);
      if (typeof answer === 'number') {
        res.writeHead(answer, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chatcmpl-test', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
