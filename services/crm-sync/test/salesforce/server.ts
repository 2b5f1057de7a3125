// startSalesforceServer: one node:http server playing the login host and the org's instance;
// it owns the auth check, the daily allocation (Sforce-Limit-Info), failNext and the calls log,
// and hands token and data calls to oauth.ts and rest.ts.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BulkJob, Cursor, ServerContext, Session } from './context';
import { readBody } from './context';
import { SalesforceApiError } from './errors';
import { BASE62, idChecksum } from './ids';
import { b64url, oauthHandlers } from './oauth';
import { SalesforceOrg } from './org';
import { restRoutes } from './rest';
import type { RefreshTokenGrant, SalesforceCall, SalesforceReply, SalesforceServer, SalesforceServerOptions } from './types';

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json;charset=UTF-8', ...headers });
  res.end(text);
};

/** The longest request URI Salesforce's REST API takes. */
export const MAX_URI_CHARS = 16_384;

export async function startSalesforceServer(options: SalesforceServerOptions = {}): Promise<SalesforceServer> {
  const clock = options.now ?? (() => new Date());
  const org = options.org ?? new SalesforceOrg({ now: clock });
  for (const f of options.customFields ?? []) org.declareField(f.type, f.name, f.kind);
  const clientIds = new Set(options.clientIds ?? ['3MVG9sightline.test.client']);
  const usernames = new Set(options.usernames ?? ['integration@sightline.test']);
  const sessions = new Map<string, Session>();
  const refresh = new Map<string, RefreshTokenGrant & { revoked: boolean }>();
  for (const r of options.refreshTokens ?? []) refresh.set(r.token, { ...r, revoked: false });
  const calls: SalesforceCall[] = [];
  const scripted: (SalesforceReply | 'reset')[] = [];
  let seq = 0;
  const sessionMs = (options.sessionSeconds ?? 7200) * 1000;
  const now = (): number => clock().getTime();
  const userId = (username: string): string => idChecksum(`0055e00000${b64url(createHmac('sha256', 'u').update(username).digest()).replace(/[^A-Za-z0-9]/g, '').slice(0, 5)}`);
  const opaque = (prefix: string): string => {
    seq += 1;
    let body = '';
    for (let x = seq, i = 0; i < 10; i++, x = Math.floor(x / 62)) body = BASE62[x % 62] + body;
    return idChecksum(`${prefix}5e${body}`);
  };
  const ctx: ServerContext = {
    options,
    org,
    clientIds,
    usernames,
    sessions,
    refresh,
    cursors: new Map<string, Cursor>(),
    jobs: new Map<string, BulkJob>(),
    batchSize: Math.min(Math.max(options.batchSize ?? 2000, 1), 2000),
    sessionMs,
    retentionMs: (options.deletedRetentionDays ?? 30) * 86400_000,
    cursorIdleMs: (options.cursorIdleSeconds ?? 900) * 1000,
    url: '',
    used: 0,
    max: options.dailyAllocation ?? 15000,
    now,
    userId,
    opaque,
  };
  const { newSession, tokenGrant } = oauthHandlers(ctx);
  const route = restRoutes(ctx);

  const authOk = (req: IncomingMessage): boolean => {
    const h = req.headers['authorization'] ?? '';
    const m = /^(?:Bearer|OAuth)\s+(.+)$/i.exec(h);
    if (!m) return false;
    const token = m[1]!.trim();
    if (options.staticToken && token === options.staticToken && !sessions.get(token)?.revoked) return true;
    const s = sessions.get(token);
    return !!s && !s.revoked && now() - s.issuedAt < sessionMs;
  };

  const limitHeader = (): Record<string, string> => ({ 'Sforce-Limit-Info': `api-usage=${ctx.used}/${ctx.max}` });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if ((req.url ?? '').length > MAX_URI_CHARS) {
      // Salesforce refuses a request URI over 16,384 characters before it reads anything else.
      calls.push({ method: req.method ?? 'GET', path: (req.url ?? '').split('?')[0] ?? '', query: {}, status: 414, endpoint: 'unknown', at: now() });
      res.writeHead(414, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify([{ errorCode: 'URI_TOO_LONG', message: `The request URI is longer than ${MAX_URI_CHARS} characters.` }]));
      return;
    }
    const u = new URL(req.url ?? '/', 'http://localhost');
    const query: Record<string, string> = {};
    u.searchParams.forEach((v, k) => (query[k] = v));
    const call: SalesforceCall = { method: req.method ?? 'GET', path: u.pathname, query, status: 0, endpoint: 'unknown', at: now() };
    calls.push(call);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      call.status = status;
      if (headers['Content-Type']?.startsWith('text/csv')) {
        res.writeHead(status, headers);
        res.end(body as string);
      } else json(res, status, body, headers);
    };
    const isData = u.pathname.startsWith('/services/data');

    const next = scripted.shift();
    if (next === 'reset') {
      call.status = -1;
      req.socket.destroy();
      return;
    }
    if (next) {
      send(next.status, next.body, { ...(isData ? limitHeader() : {}), ...(next.headers ?? {}) });
      return;
    }

    if (u.pathname === '/services/oauth2/token') {
      call.endpoint = 'token';
      if (req.method !== 'POST') return send(405, { error: 'invalid_request', error_description: 'must use HTTP POST' });
      const text = await readBody(req);
      const params = new URLSearchParams(text);
      u.searchParams.forEach((v, k) => {
        if (!params.has(k)) params.set(k, v);
      });
      const a = tokenGrant(params);
      return send(a.status, a.body);
    }
    if (!isData) return send(404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
    if (u.pathname === '/services/data' || u.pathname === '/services/data/') {
      // The versions list needs no session and does not count against the allocation.
      call.endpoint = 'versions';
      return send(200, [62, 63, 64, 65, 66, 67, 68].map((v) => ({ label: `v${v}.0`, url: `/services/data/v${v}.0`, version: `${v}.0` })));
    }
    const m = /^\/services\/data\/(v\d{2,3}\.0)(\/.*)?$/.exec(u.pathname);
    if (!m) return send(404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
    if (!authOk(req)) return send(401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }]);
    if (ctx.used >= ctx.max) return send(403, [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }], limitHeader());
    ctx.used += 1;
    try {
      const [status, body, headers] = await route(req, m[1]!, m[2] ?? '/', u.searchParams, (l) => (call.endpoint = l));
      send(status, body, { ...limitHeader(), ...(headers ?? {}) });
    } catch (e) {
      if (e instanceof SalesforceApiError) send(e.status, e.body(), limitHeader());
      else send(500, [{ errorCode: 'UNKNOWN_EXCEPTION', message: `An unexpected error occurred. ${(e as Error).message}` }], limitHeader());
    }
  };

  // Room for a long request line, so an over-long URI gets Salesforce's own answer (414), not Node's 431.
  const server: Server = createServer({ maxHeaderSize: 256 * 1024 }, (req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ctx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: ctx.url,
    org,
    calls,
    usage: () => ({ used: ctx.used, max: ctx.max }),
    resetAllocation(newMax?: number) {
      ctx.used = 0;
      if (newMax !== undefined) ctx.max = newMax;
    },
    failNext(...answers) {
      scripted.push(...answers);
    },
    revokeToken(token) {
      const s = sessions.get(token);
      if (s) s.revoked = true;
      else sessions.set(token, { username: '', issuedAt: 0, revoked: true }); // also covers the static token
    },
    revokeRefreshToken(token) {
      const r = refresh.get(token);
      if (r) r.revoked = true;
    },
    issuedTokens() {
      return [...sessions].filter(([, s]) => !s.revoked && now() - s.issuedAt < sessionMs).map(([t]) => t);
    },
    issueToken(username?: string) {
      return newSession(username ?? [...usernames][0] ?? 'integration@sightline.test');
    },
    issueRefreshToken(clientId?: string, username?: string) {
      const token = `5Aep861${randomBytes(40).toString('base64url').replace(/[-_]/g, 'x')}`;
      refresh.set(token, { token, clientId: clientId ?? [...clientIds][0]!, username: username ?? [...usernames][0]!, revoked: false });
      return token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
