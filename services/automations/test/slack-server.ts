// A local server answering as Slack's Web API documents the methods automations uses: auth.test,
// conversations.info, chat.postMessage (ok:false errors channel_not_found and not_in_channel;
// HTTP 429 with Retry-After and error ratelimited) and conversations.history (with message
// metadata when include_all_metadata is set). Bodies are form-encoded or JSON, as Slack accepts.
// A posted message is in the channel as soon as the request arrives, even if the answer is held
// and the client goes away (as on Slack).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PostedMessage {
  channel: string;
  text: string;
  ts: string;
  metadata: { event_type: string; event_payload: Record<string, unknown> } | null;
}

export interface TestSlackServer {
  /** Base URL to give automations (SIGHTLINE_SLACK_API_URL). */
  url: string;
  token: string;
  teamId: string;
  posted: PostedMessage[];
  /** Channels the bot can post to; others answer channel_not_found, or not_in_channel when listed in notMember. */
  channels: Set<string>;
  notMember: Set<string>;
  /** chat.postMessage answers 429 ratelimited with this Retry-After for the next `count` calls. */
  rateLimitNext(count: number, retryAfterSeconds: number): void;
  /** Holds chat.postMessage answers (the message is already posted) until release() or the client disconnects. */
  hold(): void;
  release(): void;
  holding(n: number): Promise<void>;
  calls: { method: string; at: number }[];
  waitFor(n: number, timeoutMs?: number): Promise<PostedMessage[]>;
  close(): Promise<void>;
}

export async function startSlackServer(options: { channels?: string[]; token?: string } = {}): Promise<TestSlackServer> {
  const token = options.token ?? 'xoxb-test-0000000000-abcdefghijklmnop';
  const teamId = 'T0TESTTEAM';
  const posted: PostedMessage[] = [];
  const channels = new Set(options.channels ?? ['C0ALERTS01', 'C0ALERTS02']);
  const notMember = new Set<string>();
  const calls: { method: string; at: number }[] = [];
  let limited: { count: number; retryAfter: number } | null = null;
  let holdAll = false;
  const held = new Set<() => void>();
  let holdWaiters: { n: number; resolve: () => void }[] = [];
  let seq = 0;

  const readArgs = async (req: IncomingMessage, url: URL): Promise<Record<string, unknown>> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const args: Record<string, unknown> = Object.fromEntries(url.searchParams);
    if ((req.headers['content-type'] ?? '').includes('application/json')) Object.assign(args, raw ? JSON.parse(raw) : {});
    else Object.assign(args, Object.fromEntries(new URLSearchParams(raw)));
    return args;
  };
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = url.pathname.replace(/^\/api\//, '').replace(/^\//, '');
      calls.push({ method, at: Date.now() });
      const args = await readArgs(req, url);
      const auth = (req.headers.authorization ?? '').replace(/^Bearer /, '') || String(args['token'] ?? '');
      if (auth !== token) return send(res, 200, { ok: false, error: 'invalid_auth' });
      switch (method) {
        case 'auth.test':
          return send(res, 200, { ok: true, url: 'https://sightline-test.slack.com/', team: 'Sightline Test', user: 'sightline', team_id: teamId, user_id: 'U0BOTUSER', bot_id: 'B0BOT' });
        case 'conversations.info': {
          const channel = String(args['channel'] ?? '');
          if (!channels.has(channel) && !notMember.has(channel)) return send(res, 200, { ok: false, error: 'channel_not_found' });
          return send(res, 200, { ok: true, channel: { id: channel, name: channel.toLowerCase(), is_channel: true, is_member: !notMember.has(channel) } });
        }
        case 'chat.postMessage': {
          if (limited && limited.count > 0) {
            limited.count -= 1;
            return send(res, 429, { ok: false, error: 'ratelimited' }, { 'Retry-After': String(limited.retryAfter) });
          }
          const channel = String(args['channel'] ?? '');
          if (notMember.has(channel)) return send(res, 200, { ok: false, error: 'not_in_channel' });
          if (!channels.has(channel)) return send(res, 200, { ok: false, error: 'channel_not_found' });
          const text = String(args['text'] ?? '');
          if (!text) return send(res, 200, { ok: false, error: 'no_text' });
          const rawMeta = args['metadata'];
          const metadata = typeof rawMeta === 'string' ? JSON.parse(rawMeta) : (rawMeta as PostedMessage['metadata']) ?? null;
          seq += 1;
          const ts = `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`;
          posted.push({ channel, text, ts, metadata });
          if (holdAll) {
            await new Promise<void>((resolve) => {
              held.add(resolve);
              req.socket.once('close', resolve);
              for (const w of holdWaiters.filter((x) => held.size >= x.n)) w.resolve();
              holdWaiters = holdWaiters.filter((x) => held.size < x.n);
            });
            if (req.socket.destroyed) return undefined;
          }
          return send(res, 200, { ok: true, channel, ts, message: { type: 'message', subtype: 'bot_message', text, ts, bot_id: 'B0BOT' } });
        }
        case 'conversations.history': {
          const channel = String(args['channel'] ?? '');
          if (!channels.has(channel)) return send(res, 200, { ok: false, error: 'channel_not_found' });
          const oldest = Number(args['oldest'] ?? 0);
          const withMeta = String(args['include_all_metadata'] ?? 'false') === 'true';
          const messages = posted.filter((m) => m.channel === channel && Number(m.ts) >= oldest).reverse()
            .map((m) => ({ type: 'message', subtype: 'bot_message', text: m.text, ts: m.ts, bot_id: 'B0BOT', ...(withMeta && m.metadata ? { metadata: m.metadata } : {}) }));
          return send(res, 200, { ok: true, messages, has_more: false, pin_count: 0, response_metadata: { next_cursor: '' } });
        }
        default:
          return send(res, 200, { ok: false, error: 'unknown_method' });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api`,
    token,
    teamId,
    posted,
    channels,
    notMember,
    calls,
    rateLimitNext(count, retryAfterSeconds) {
      limited = { count, retryAfter: retryAfterSeconds };
    },
    hold() {
      holdAll = true;
    },
    release() {
      holdAll = false;
      for (const resolve of held) resolve();
      held.clear();
    },
    holding(n) {
      if (held.size >= n) return Promise.resolve();
      return new Promise((resolve) => holdWaiters.push({ n, resolve }));
    },
    async waitFor(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (posted.length < n) {
        if (Date.now() > deadline) throw new Error(`Slack server: ${posted.length} of ${n} messages posted`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return posted;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
