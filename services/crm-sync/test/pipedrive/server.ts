// FakePipedrive: the HTTP server (start/close), the request handler (body parsing, auth, rate
// limits, injected faults, the request log), the route table with each call's token cost, and
// the failNext/revoke test hooks. Data, limits and route handlers come from its base classes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PipedriveChangelog } from './changelog';
import { dealJson, errorBody, orgJson, personJson, pipelineJson, stageJson } from './json';
import { header, matchId, readBody } from './params';
import { COST, HttpError, type FakePipedriveOptions, type LoggedRequest } from './types';

export class FakePipedrive extends PipedriveChangelog {
  readonly apiToken: string;
  readonly accessToken: string;
  readonly requests: LoggedRequest[] = [];
  private readonly revoked = new Set<string>();
  private server: Server | null = null;
  private baseUrl = '';
  private faults: { status: number; count: number; retryAfter?: number } [] = [];

  constructor(options: FakePipedriveOptions = {}) {
    super(options);
    this.apiToken = options.apiToken ?? 'pd-api-token-0123456789abcdef';
    this.accessToken = options.accessToken ?? 'pd-oauth-access-token-fedcba9876543210';
  }

  get url(): string {
    return this.baseUrl;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    const server = this.server;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- test hooks ----

  /** The next `count` requests answer `status` (5xx, or 429 with x-ratelimit-reset / Retry-After seconds). */
  failNext(count: number, status = 503, retryAfterSeconds?: number): void {
    this.faults.push({ status, count, ...(retryAfterSeconds === undefined ? {} : { retryAfter: retryAfterSeconds }) });
  }

  /** The token stops working (a user regenerated the API token or uninstalled the app). */
  revoke(token: string): void {
    this.revoked.add(token);
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query = Object.fromEntries(url.searchParams);
    const raw = await readBody(req);
    let body: unknown = undefined;
    const entry: LoggedRequest = { method: req.method ?? 'GET', path: url.pathname, query, body, auth: null, status: 0 };
    this.requests.push(entry);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const send = (status: number, payload: unknown): void => {
      entry.status = status;
      res.writeHead(status, headers);
      res.end(JSON.stringify(payload));
    };
    try {
      if (raw !== '') {
        try {
          body = JSON.parse(raw);
          entry.body = body;
        } catch {
          throw new HttpError(400, 'Request body is not valid JSON');
        }
      }
      const auth = this.authenticate(req);
      entry.auth = auth?.kind ?? null;
      if (!auth) {
        entry.status = 401;
        res.writeHead(401, headers);
        res.end(JSON.stringify({ success: false, error: 'unauthorized access', errorCode: 401, error_info: 'Please check developers.pipedrive.com' }));
        return;
      }
      Object.assign(headers, this.burstHeaders(auth.token));
      if (entry.method !== 'GET' && auth.kind === 'api_token') headers['x-daily-requests-left'] = String(this.spendWrite(auth.token));
      const fault = this.faults[0];
      if (fault) {
        if (--fault.count <= 0) this.faults.shift();
        if (fault.status === 429) {
          headers['x-ratelimit-remaining'] = '0';
          headers['x-ratelimit-reset'] = String(fault.retryAfter ?? 2);
          return send(429, errorBody('Request over limit', 'Too many requests in this window; wait until x-ratelimit-reset'));
        }
        return send(fault.status, errorBody('Internal server error', 'Try again later'));
      }
      if (Number(headers['x-ratelimit-remaining']) < 0) {
        headers['x-ratelimit-remaining'] = '0';
        return send(429, errorBody('Request over limit', 'Too many requests in this window; wait until x-ratelimit-reset'));
      }
      const route = this.route(entry.method, url.pathname);
      if (!route) throw new HttpError(404, `Unknown method ${entry.method} ${url.pathname}`);
      this.rollBudget();
      if (this.budget.left < route.cost) {
        headers['retry-after'] = String(Math.ceil((this.nextMidnight() - this.now()) / 1000));
        return send(429, errorBody('Daily API token budget exceeded', 'The company has used its API token budget for today; it resets at midnight UTC'));
      }
      this.budget.left -= route.cost;
      send(200, route.run(query, body));
    } catch (error) {
      if (error instanceof HttpError) return send(error.status, { ...errorBody(error.error, 'Please check developers.pipedrive.com'), ...error.extra });
      send(500, errorBody('Internal server error', String(error)));
    }
  }

  private authenticate(req: IncomingMessage): { kind: 'api_token' | 'oauth'; token: string } | null {
    const apiToken = header(req, 'x-api-token');
    const bearer = /^Bearer (.+)$/.exec(header(req, 'authorization') ?? '')?.[1];
    if (apiToken !== undefined) return apiToken === this.apiToken && !this.revoked.has(apiToken) ? { kind: 'api_token', token: apiToken } : null;
    if (bearer !== undefined) return bearer === this.accessToken && !this.revoked.has(bearer) ? { kind: 'oauth', token: bearer } : null;
    return null;
  }

  private route(method: string, path: string): { cost: number; run: (q: Record<string, string>, body: unknown) => unknown } | null {
    let m: RegExpExecArray | null;
    if (method === 'GET') {
      if (path === '/api/v2/pipelines') return { cost: COST.small, run: (q) => this.list([...this.pipelines.values()].filter((p) => !p.is_deleted), q, pipelineJson, ['id', 'update_time', 'add_time']) };
      if (path === '/api/v2/stages') return { cost: COST.small, run: (q) => this.list([...this.stages.values()].filter((s) => !s.is_deleted && (q['pipeline_id'] === undefined || s.pipeline_id === Number(q['pipeline_id']))), q, stageJson, ['id', 'update_time', 'add_time', 'order_nr']) };
      if (path === '/api/v2/organizations') return { cost: COST.list, run: (q) => this.list(this.filterUpdated([...this.organizations.values()].filter((o) => !o.is_deleted), q), q, orgJson, ['id', 'update_time', 'add_time']) };
      if (path === '/api/v2/persons') return { cost: COST.list, run: (q) => this.list(this.filterUpdated([...this.persons.values()].filter((p) => !p.is_deleted && matchId(q['org_id'], p.org_id)), q), q, personJson, ['id', 'update_time', 'add_time']) };
      if (path === '/api/v2/deals') return { cost: COST.list, run: (q) => this.list(this.filterUpdated(this.dealsMatching(q), q), q, dealJson, ['id', 'update_time', 'add_time']) };
      if (path === '/api/v2/persons/search') return { cost: COST.search, run: (q) => this.searchPersons(q) };
      if ((m = /^\/api\/v2\/deals\/(\d+)$/.exec(path))) return { cost: COST.single, run: () => ({ success: true, data: dealJson(this.visibleDeal(Number(m![1]))) }) };
      if ((m = /^\/api\/v2\/persons\/(\d+)$/.exec(path))) return { cost: COST.single, run: () => ({ success: true, data: personJson(this.visiblePerson(Number(m![1]))) }) };
      if ((m = /^\/api\/v1\/deals\/(\d+)\/changelog$/.exec(path))) return { cost: COST.changelog, run: (q) => this.changelogPage(Number(m![1]), q) };
    }
    if (method === 'PATCH') {
      if ((m = /^\/api\/v2\/persons\/(\d+)$/.exec(path))) return { cost: COST.write, run: (_q, body) => this.patchPerson(Number(m![1]), body) };
      if ((m = /^\/api\/v2\/deals\/(\d+)$/.exec(path))) return { cost: COST.write, run: (_q, body) => this.patchDeal(Number(m![1]), body) };
    }
    return null;
  }
}
