// A local Pipedrive for tests: an HTTP server answering the calls the connector makes, in the
// shapes Pipedrive documents for API v2 (and v1 for a deal's changelog): `{success, data,
// additional_data: {next_cursor}}` lists paged by an opaque `cursor` and `limit` (at most 500),
// `updated_since`/`sort_by`/`sort_direction`, auth by the `x-api-token` header or `Authorization:
// Bearer`, error bodies `{success: false, error, error_info, data, additional_data}` (401 in v1's
// `{success, error, errorCode}` form plus error_info), and the rate-limit headers on every answer
// (x-ratelimit-limit / -remaining / -reset for the per-token burst window, x-daily-requests-left
// on writes made with an API token). Each request spends its documented token cost from a daily
// budget; a spent budget answers 429 until the next UTC midnight. It holds one company's data in
// memory, records every stage and status change of a deal (so the changelog answers), logs every
// request, and injects faults. Times come from a clock the test can freeze and move.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Rng } from '@sightline/datagen';

export interface FakePipedriveOptions {
  /** The API token the company accepts (x-api-token). */
  apiToken?: string;
  /** The OAuth access token the company accepts (Authorization: Bearer). */
  accessToken?: string;
  /** Burst limit per token: requests per window (Pipedrive: per 2 s, by plan). */
  burst?: { limit: number; windowMs: number };
  /** Daily token budget of the company (Pipedrive: 30,000 × plan multiplier × seats). */
  dailyBudget?: number;
  /** Start the clock frozen at this instant (ISO); otherwise it follows the real time until frozen. */
  now?: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  auth: 'api_token' | 'oauth' | null;
  status: number;
}

type Status = 'open' | 'won' | 'lost' | 'deleted';

export interface StoredPipeline { id: number; name: string; order_nr: number; is_deleted: boolean; is_deal_probability_enabled: boolean; add: number; update: number }
export interface StoredStage { id: number; name: string; order_nr: number; pipeline_id: number; deal_probability: number; is_deleted: boolean; add: number; update: number }
export interface StoredOrg { id: number; name: string; owner_id: number; is_deleted: boolean; add: number; update: number; custom_fields: Record<string, unknown> }
export interface StoredPerson { id: number; name: string; owner_id: number; org_id: number | null; emails: { value: string; primary: boolean; label: string }[]; is_deleted: boolean; add: number; update: number; custom_fields: Record<string, unknown> }
export interface StoredDeal {
  id: number; title: string; owner_id: number; person_id: number | null; org_id: number | null; pipeline_id: number; stage_id: number;
  value: number; currency: string; status: Status; add: number; update: number; stage_change: number | null;
  won: number | null; lost: number | null; close: number | null; is_archived: boolean; custom_fields: Record<string, unknown>;
}
interface Change { field_key: string; old_value: string | null; new_value: string | null; at: number; source: string }

export interface DealInput {
  title: string; pipeline_id?: number; stage_id: number; value?: number; currency?: string;
  person_id?: number | null; org_id?: number | null; status?: Status; custom_fields?: Record<string, unknown>;
}
export type DealPatch = Partial<Pick<StoredDeal, 'title' | 'stage_id' | 'pipeline_id' | 'value' | 'currency' | 'status' | 'person_id' | 'org_id'>> & { custom_fields?: Record<string, unknown> };

/** Documented token costs (x-token-cost in Pipedrive's OpenAPI descriptions) of the calls served. */
const COST = { list: 10, small: 5, single: 1, write: 5, search: 20, changelog: 20 } as const;
const DAILY_WRITES = 10_000;
const USER_ID = 7001;

class HttpError extends Error {
  constructor(readonly status: number, readonly error: string, readonly extra: Record<string, unknown> = {}) {
    super(error);
  }
}

export class FakePipedrive {
  readonly apiToken: string;
  readonly accessToken: string;
  readonly requests: LoggedRequest[] = [];
  readonly pipelines = new Map<number, StoredPipeline>();
  readonly stages = new Map<number, StoredStage>();
  readonly organizations = new Map<number, StoredOrg>();
  readonly persons = new Map<number, StoredPerson>();
  readonly deals = new Map<number, StoredDeal>();
  private readonly changes = new Map<number, Change[]>();
  private readonly personFields = new Set<string>();
  private readonly dealFields = new Set<string>();
  private readonly revoked = new Set<string>();
  private server: Server | null = null;
  private baseUrl = '';
  private nextId = 1;
  private frozen: number | null;
  private readonly burst: { limit: number; windowMs: number };
  private readonly windows = new Map<string, { start: number; count: number }>();
  private budget: { day: string; left: number };
  private writesLeft = new Map<string, { day: string; left: number }>();
  private readonly dailyBudget: number;
  private faults: { status: number; count: number; retryAfter?: number } [] = [];

  constructor(options: FakePipedriveOptions = {}) {
    this.apiToken = options.apiToken ?? 'pd-api-token-0123456789abcdef';
    this.accessToken = options.accessToken ?? 'pd-oauth-access-token-fedcba9876543210';
    this.burst = options.burst ?? { limit: 80, windowMs: 2000 };
    this.dailyBudget = options.dailyBudget ?? 1_000_000;
    this.frozen = options.now ? Date.parse(options.now) : null;
    this.budget = { day: this.day(), left: this.dailyBudget };
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

  // ---- clock ----

  now(): number {
    return this.frozen ?? Date.now();
  }

  /** Freezes the clock at an instant (ISO 8601). */
  setNow(iso: string): void {
    this.frozen = Date.parse(iso);
  }

  /** Moves a frozen clock on (freezing it at the real time first if it was not). */
  advance(ms: number): void {
    this.frozen = (this.frozen ?? Date.now()) + ms;
  }

  // ---- the company's data ----

  /** A custom field key as Pipedrive makes them: 40 hex characters. */
  addCustomField(entity: 'person' | 'deal', name: string): string {
    const key = createHash('sha1').update(`${entity}:${name}`).digest('hex');
    (entity === 'person' ? this.personFields : this.dealFields).add(key);
    return key;
  }

  addPipeline(name: string, stageNames: string[]): { id: number; stages: number[] } {
    const at = this.now();
    const id = this.nextId++;
    this.pipelines.set(id, { id, name, order_nr: this.pipelines.size + 1, is_deleted: false, is_deal_probability_enabled: false, add: at, update: at });
    const stages = stageNames.map((stageName, i) => {
      const stageId = this.nextId++;
      this.stages.set(stageId, { id: stageId, name: stageName, order_nr: i + 1, pipeline_id: id, deal_probability: 100, is_deleted: false, add: at, update: at });
      return stageId;
    });
    return { id, stages };
  }

  addOrganization(name: string): number {
    const at = this.now();
    const id = this.nextId++;
    this.organizations.set(id, { id, name, owner_id: USER_ID, is_deleted: false, add: at, update: at, custom_fields: {} });
    return id;
  }

  addPerson(name: string, emails: string[], orgId: number | null = null): number {
    const at = this.now();
    const id = this.nextId++;
    this.persons.set(id, { id, name, owner_id: USER_ID, org_id: orgId, emails: emails.map((value, i) => ({ value, primary: i === 0, label: i === 0 ? 'work' : 'home' })), is_deleted: false, add: at, update: at, custom_fields: this.blankFields(this.personFields) });
    return id;
  }

  updatePerson(id: number, patch: Partial<Pick<StoredPerson, 'name' | 'org_id' | 'emails'>>): void {
    const p = this.mustGet(this.persons, id, 'Person');
    Object.assign(p, patch, { update: this.now() });
  }

  deletePerson(id: number): void {
    Object.assign(this.mustGet(this.persons, id, 'Person'), { is_deleted: true, update: this.now() });
  }

  updateOrganization(id: number, patch: Partial<Pick<StoredOrg, 'name'>>): void {
    Object.assign(this.mustGet(this.organizations, id, 'Organization'), patch, { update: this.now() });
  }

  addDeal(input: DealInput): number {
    const stage = this.mustGet(this.stages, input.stage_id, 'Stage');
    const at = this.now();
    const id = this.nextId++;
    const status = input.status ?? 'open';
    this.deals.set(id, {
      id, title: input.title, owner_id: USER_ID, person_id: input.person_id ?? null, org_id: input.org_id ?? null,
      pipeline_id: stage.pipeline_id, stage_id: stage.id, value: input.value ?? 0, currency: input.currency ?? 'EUR', status,
      add: at, update: at, stage_change: null, won: status === 'won' ? at : null, lost: status === 'lost' ? at : null,
      close: status === 'won' || status === 'lost' ? at : null, is_archived: false, custom_fields: { ...this.blankFields(this.dealFields), ...(input.custom_fields ?? {}) },
    });
    this.changes.set(id, []);
    return id;
  }

  /** Changes a deal as a user would; stage, pipeline and status changes land in its changelog. */
  updateDeal(id: number, patch: DealPatch, source = 'app'): void {
    const d = this.mustGet(this.deals, id, 'Deal');
    const at = this.now();
    const log = this.changes.get(id)!;
    const note = (field: string, before: unknown, after: unknown): void => {
      if (before === after) return;
      log.push({ field_key: field, old_value: before === null ? null : String(before), new_value: after === null ? null : String(after), at, source });
    };
    if (patch.stage_id !== undefined && patch.stage_id !== d.stage_id) {
      const stage = this.mustGet(this.stages, patch.stage_id, 'Stage');
      note('pipeline_id', d.pipeline_id, stage.pipeline_id);
      note('stage_id', d.stage_id, stage.id);
      d.pipeline_id = stage.pipeline_id;
      d.stage_id = stage.id;
      d.stage_change = at;
    }
    if (patch.status !== undefined && patch.status !== d.status) {
      note('status', d.status, patch.status);
      d.status = patch.status;
      d.won = patch.status === 'won' ? at : patch.status === 'open' ? null : d.won;
      d.lost = patch.status === 'lost' ? at : patch.status === 'open' ? null : d.lost;
      d.close = patch.status === 'won' || patch.status === 'lost' ? at : patch.status === 'open' ? null : d.close;
    }
    for (const key of ['title', 'value', 'currency', 'person_id', 'org_id'] as const) {
      if (patch[key] === undefined) continue;
      note(key, d[key], patch[key]);
      (d as unknown as Record<string, unknown>)[key] = patch[key];
    }
    if (patch.custom_fields) Object.assign(d.custom_fields, patch.custom_fields);
    d.update = at;
  }

  /** The deal's recorded changes, oldest first (the API answers newest first). */
  changelogOf(id: number): { field_key: string; old_value: string | null; new_value: string | null; time: string }[] {
    return (this.changes.get(id) ?? []).map((c) => ({ field_key: c.field_key, old_value: c.old_value, new_value: c.new_value, time: v1Time(c.at) }));
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

  /** Tokens left in today's budget. */
  budgetLeft(): number {
    this.rollBudget();
    return this.budget.left;
  }

  /** Spends today's budget down to `left` tokens. */
  setBudgetLeft(left: number): void {
    this.rollBudget();
    this.budget.left = left;
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

  /** Counts the request in its token's window; remaining below 0 means over the limit. */
  private burstHeaders(token: string): Record<string, string> {
    const now = Date.now();
    let w = this.windows.get(token);
    if (!w || now - w.start >= this.burst.windowMs) this.windows.set(token, (w = { start: now, count: 0 }));
    w.count++;
    return {
      'x-ratelimit-limit': String(this.burst.limit),
      'x-ratelimit-remaining': String(this.burst.limit - w.count),
      'x-ratelimit-reset': String(Math.max(1, Math.ceil((w.start + this.burst.windowMs - now) / 1000))),
    };
  }

  private spendWrite(token: string): number {
    let w = this.writesLeft.get(token);
    if (!w || w.day !== this.day()) this.writesLeft.set(token, (w = { day: this.day(), left: DAILY_WRITES }));
    w.left = Math.max(0, w.left - 1);
    return w.left;
  }

  private day(): string {
    return new Date(this.now()).toISOString().slice(0, 10);
  }

  private nextMidnight(): number {
    return Date.parse(`${this.day()}T00:00:00Z`) + 86_400_000;
  }

  private rollBudget(): void {
    if (this.budget.day !== this.day()) this.budget = { day: this.day(), left: this.dailyBudget };
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

  private dealsMatching(q: Record<string, string>): StoredDeal[] {
    const statuses = q['status'] ? q['status'].split(',') : null;
    return [...this.deals.values()].filter((d) => !d.is_archived
      && (statuses ? statuses.includes(d.status) : d.status !== 'deleted')
      && matchId(q['person_id'], d.person_id) && matchId(q['org_id'], d.org_id)
      && matchId(q['pipeline_id'], d.pipeline_id) && matchId(q['stage_id'], d.stage_id));
  }

  private filterUpdated<T extends { update: number }>(items: T[], q: Record<string, string>): T[] {
    const since = q['updated_since'] === undefined ? null : rfc3339(q['updated_since'], 'updated_since');
    const until = q['updated_until'] === undefined ? null : rfc3339(q['updated_until'], 'updated_until');
    // Pipedrive keeps update_time to the second.
    const second = (ms: number): number => Math.floor(ms / 1000) * 1000;
    return items.filter((i) => (since === null || second(i.update) >= since) && (until === null || second(i.update) < until));
  }

  /** One page of a v2 list: sorted, then cut after the cursor's position. */
  private list<T extends { id: number; add: number; update: number }>(items: T[], q: Record<string, string>, json: (item: T) => unknown, sortable: string[]): unknown {
    const sortBy = q['sort_by'] ?? 'id';
    if (!sortable.includes(sortBy)) throw new HttpError(400, `Invalid sort_by: ${sortBy}. Supported fields: ${sortable.join(', ')}`);
    const direction = q['sort_direction'] ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') throw new HttpError(400, 'Invalid sort_direction: use asc or desc');
    const limit = parseLimit(q['limit']);
    const key = (item: T): number => (sortBy === 'update_time' ? Math.floor(item.update / 1000) : sortBy === 'add_time' ? Math.floor(item.add / 1000) : sortBy === 'order_nr' ? (item as unknown as { order_nr: number }).order_nr : item.id);
    const sign = direction === 'asc' ? 1 : -1;
    const sorted = [...items].sort((a, b) => sign * (key(a) - key(b) || a.id - b.id));
    let start = 0;
    if (q['cursor'] !== undefined) {
      const c = decodeListCursor(q['cursor']);
      if (c.sortBy !== sortBy || c.direction !== direction) throw new HttpError(400, 'The cursor belongs to a different sort order');
      start = sorted.findIndex((i) => sign * (key(i) - c.key || i.id - c.id) > 0);
      if (start < 0) start = sorted.length;
    }
    const page = sorted.slice(start, start + limit);
    const last = page[page.length - 1];
    const more = start + limit < sorted.length && last !== undefined;
    return { success: true, data: page.map(json), additional_data: { next_cursor: more ? encodeListCursor({ sortBy, direction, key: key(last!), id: last!.id }) : null } };
  }

  private searchPersons(q: Record<string, string>): unknown {
    const term = (q['term'] ?? '').trim().toLowerCase();
    const exact = q['exact_match'] === 'true';
    if (term.length < (exact ? 1 : 2)) throw new HttpError(400, 'Search term must be at least 2 characters long (1 with exact_match)');
    const fields = q['fields'] ? q['fields'].split(',') : ['name', 'email', 'phone', 'notes', 'custom_fields'];
    const hit = (value: string): boolean => (exact ? value.toLowerCase() === term : value.toLowerCase().includes(term));
    const found = [...this.persons.values()].filter((p) => !p.is_deleted
      && ((fields.includes('email') && p.emails.some((e) => hit(e.value))) || (fields.includes('name') && hit(p.name))));
    const limit = parseLimit(q['limit']);
    const page = found.slice(0, limit);
    return {
      success: true,
      data: {
        items: page.map((p) => ({
          result_score: exact ? 1 : 0.5,
          item: {
            id: p.id, type: 'person', name: p.name, phones: [], emails: p.emails.map((e) => e.value), visible_to: 3, owner: { id: p.owner_id },
            organization: p.org_id === null ? null : { id: p.org_id, name: this.organizations.get(p.org_id)?.name ?? null, address: null },
            custom_fields: [], notes: [],
          },
        })),
      },
      additional_data: { next_cursor: null },
    };
  }

  private changelogPage(dealId: number, q: Record<string, string>): unknown {
    this.visibleDeal(dealId);
    const limit = parseLimit(q['limit']);
    const newestFirst = [...(this.changes.get(dealId) ?? [])].map((c, i) => ({ c, i })).reverse();
    const start = q['cursor'] === undefined ? 0 : Number(Buffer.from(q['cursor'], 'base64url').toString('utf8').replace(/^offset:/, ''));
    if (!Number.isInteger(start) || start < 0) throw new HttpError(400, 'Invalid cursor');
    const page = newestFirst.slice(start, start + limit);
    const more = start + limit < newestFirst.length;
    return {
      success: true,
      data: page.map(({ c }) => ({ field_key: c.field_key, old_value: c.old_value, new_value: c.new_value, actor_user_id: USER_ID, time: v1Time(c.at), change_source: c.source, change_source_user_agent: null, is_bulk_update_flag: false })),
      additional_data: { next_cursor: more ? Buffer.from(`offset:${start + limit}`).toString('base64url') : null },
    };
  }

  private patchPerson(id: number, body: unknown): unknown {
    const p = this.visiblePerson(id);
    const fields = customFieldsOf(body, this.personFields);
    Object.assign(p.custom_fields, fields);
    p.update = this.now();
    return { success: true, data: personJson(p) };
  }

  private patchDeal(id: number, body: unknown): unknown {
    this.visibleDeal(id);
    const fields = customFieldsOf(body, this.dealFields);
    const rest = Object.fromEntries(Object.entries(body as Record<string, unknown>).filter(([k]) => k !== 'custom_fields')) as DealPatch;
    this.updateDeal(id, { ...rest, custom_fields: fields }, 'api');
    return { success: true, data: dealJson(this.deals.get(id)!) };
  }

  private visibleDeal(id: number): StoredDeal {
    const d = this.deals.get(id);
    if (!d || d.status === 'deleted') throw new HttpError(404, 'Deal not found');
    return d;
  }

  private visiblePerson(id: number): StoredPerson {
    const p = this.persons.get(id);
    if (!p || p.is_deleted) throw new HttpError(404, 'Person not found');
    return p;
  }

  private blankFields(keys: Set<string>): Record<string, unknown> {
    return Object.fromEntries([...keys].map((k) => [k, null]));
  }

  private mustGet<T>(map: Map<number, T>, id: number, what: string): T {
    const item = map.get(id);
    if (!item) throw new Error(`${what} ${id} does not exist in the fake company`);
    return item;
  }
}

// ---- JSON shapes (API v2) ----

/** RFC 3339 to the second, as v2 answers times. */
export function v2Time(ms: number | null): string | null {
  return ms === null ? null : new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** "YYYY-MM-DD HH:MM:SS" in UTC, as v1 answers times. */
export function v1Time(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

const pipelineJson = (p: StoredPipeline) => ({ id: p.id, name: p.name, order_nr: p.order_nr, is_deleted: p.is_deleted, is_deal_probability_enabled: p.is_deal_probability_enabled, add_time: v2Time(p.add), update_time: v2Time(p.update) });
const stageJson = (s: StoredStage) => ({ id: s.id, order_nr: s.order_nr, name: s.name, is_deleted: s.is_deleted, deal_probability: s.deal_probability, pipeline_id: s.pipeline_id, is_deal_rot_enabled: false, days_to_rotten: null, add_time: v2Time(s.add), update_time: v2Time(s.update) });
const orgJson = (o: StoredOrg) => ({ id: o.id, name: o.name, owner_id: o.owner_id, add_time: v2Time(o.add), update_time: v2Time(o.update), is_deleted: o.is_deleted, visible_to: 3, label_ids: [], address: null, custom_fields: { ...o.custom_fields } });
const personJson = (p: StoredPerson) => ({
  id: p.id, name: p.name, first_name: p.name.split(' ')[0] ?? p.name, last_name: p.name.split(' ').slice(1).join(' ') || null, owner_id: p.owner_id, org_id: p.org_id,
  add_time: v2Time(p.add), update_time: v2Time(p.update), emails: p.emails.map((e) => ({ ...e })), phones: [], is_deleted: p.is_deleted, visible_to: 3, label_ids: [], picture_id: null,
  custom_fields: { ...p.custom_fields },
});
const dealJson = (d: StoredDeal) => ({
  id: d.id, title: d.title, creator_user_id: USER_ID, owner_id: d.owner_id, value: d.value, person_id: d.person_id, org_id: d.org_id, stage_id: d.stage_id, pipeline_id: d.pipeline_id,
  currency: d.currency, archive_time: null, add_time: v2Time(d.add), update_time: v2Time(d.update), stage_change_time: v2Time(d.stage_change), status: d.status,
  is_archived: d.is_archived, is_deleted: d.status === 'deleted', probability: null, lost_reason: null, visible_to: 3, close_time: v2Time(d.close), won_time: v2Time(d.won),
  lost_time: v2Time(d.lost), expected_close_date: null, label_ids: [], origin: 'ManuallyCreated', origin_id: null, channel: null, channel_id: null, source_lead_id: null,
  arr: null, mrr: null, acv: null, custom_fields: { ...d.custom_fields },
});

function errorBody(error: string, errorInfo: string): Record<string, unknown> {
  return { success: false, error, error_info: errorInfo, data: null, additional_data: null };
}

function customFieldsOf(body: unknown, known: Set<string>): Record<string, unknown> {
  if (typeof body !== 'object' || body === null) throw new HttpError(400, 'Request body must be a JSON object');
  const fields = (body as Record<string, unknown>)['custom_fields'];
  if (fields === undefined) return {};
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new HttpError(400, 'custom_fields must be an object');
  for (const key of Object.keys(fields)) if (!known.has(key)) throw new HttpError(400, `Unknown custom field key: ${key}`);
  return fields as Record<string, unknown>;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new HttpError(400, 'limit must be a positive integer');
  // Pipedrive documents 500 as the most one page holds.
  return Math.min(n, 500);
}

function rfc3339(raw: string, name: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(raw)) throw new HttpError(400, `${name} must be an RFC3339 date-time, e.g. 2025-01-01T10:20:00Z`);
  return Date.parse(raw);
}

function matchId(raw: string | undefined, value: number | null): boolean {
  return raw === undefined || value === Number(raw);
}

interface ListCursor { sortBy: string; direction: string; key: number; id: number }

function encodeListCursor(c: ListCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeListCursor(raw: string): ListCursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ListCursor;
    if (typeof c.key === 'number' && typeof c.id === 'number') return c;
  } catch {
    // fall through
  }
  throw new HttpError(400, 'Invalid cursor');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// ---- seeds ----

export interface ExampleCompany {
  pipelines: { sales: number; renewals: number };
  stages: { qualified: number; demo: number; proposal: number; negotiation: number; renewalDue: number; renewalSigned: number };
  orgs: { acme: number; globex: number; initech: number };
  persons: { ada: number; bob: number; cy: number; dee: number; eve: number };
  deals: { expansion: number; pilot: number; lostDeal: number; renewal: number };
  fields: { personSalesValue: string; personStatus: string; dealSalesValue: string };
}

/**
 * A small company with a known history, clock frozen and moved by the hour so every change has
 * its own time: two pipelines, three organizations, five persons, four deals (one moved twice
 * then won, one lost, one still open, one never moved).
 */
export function seedExampleCompany(fake: FakePipedrive, start = '2026-03-01T09:00:00Z'): ExampleCompany {
  fake.setNow(start);
  const fields = {
    personSalesValue: fake.addCustomField('person', 'Sightline sales value'),
    personStatus: fake.addCustomField('person', 'Sightline status'),
    dealSalesValue: fake.addCustomField('deal', 'Sightline sales value'),
  };
  const sales = fake.addPipeline('Sales', ['Qualified', 'Demo', 'Proposal', 'Negotiation']);
  const renewals = fake.addPipeline('Renewals', ['Renewal due', 'Renewal signed']);
  const [qualified, demo, proposal, negotiation] = sales.stages as [number, number, number, number];
  const [renewalDue, renewalSigned] = renewals.stages as [number, number];
  const acme = fake.addOrganization('Acme GmbH');
  const globex = fake.addOrganization('Globex Ltd');
  const initech = fake.addOrganization('Initech');
  const ada = fake.addPerson('Ada Lovelace', ['Ada@Acme.example', 'ada.home@example.net'], acme);
  const bob = fake.addPerson('Bob Builder', ['bob@acme.example'], acme);
  const cy = fake.addPerson('Cy Young', ['cy@globex.example'], globex);
  const dee = fake.addPerson('Dee Dee', ['dee@initech.example'], initech);
  const eve = fake.addPerson('Eve Solo', [], null);
  fake.advance(3_600_000);
  const expansion = fake.addDeal({ title: 'Acme expansion', stage_id: qualified, value: 12000, currency: 'EUR', person_id: ada, org_id: acme });
  const pilot = fake.addDeal({ title: 'Globex pilot', stage_id: qualified, value: 5000, currency: 'usd', person_id: cy, org_id: globex });
  const lostDeal = fake.addDeal({ title: 'Initech rollout', stage_id: demo, value: 8000, currency: 'EUR', person_id: dee, org_id: initech });
  const renewal = fake.addDeal({ title: 'Acme renewal', stage_id: renewalDue, value: 3000, currency: 'EUR', person_id: bob, org_id: acme });
  fake.advance(3_600_000);
  fake.updateDeal(expansion, { stage_id: demo });
  fake.updateDeal(pilot, { stage_id: proposal });
  fake.advance(3_600_000);
  fake.updateDeal(expansion, { stage_id: proposal });
  fake.updateDeal(lostDeal, { status: 'lost' });
  fake.advance(3_600_000);
  fake.updateDeal(pilot, { status: 'won' });
  fake.advance(3_600_000);
  return {
    pipelines: { sales: sales.id, renewals: renewals.id },
    stages: { qualified, demo, proposal, negotiation, renewalDue, renewalSigned },
    orgs: { acme, globex, initech },
    persons: { ada, bob, cy, dee, eve },
    deals: { expansion, pilot, lostDeal, renewal },
    fields,
  };
}

/** Deterministic draws (datagen's seeded generator): the same seed gives the same company. */
export function seededRandom(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.float();
}

/**
 * A generated company: `deals` deals over `persons` persons and `organizations` organizations in
 * one five-stage pipeline; about a third of the deals move one to three stages, then some are won
 * or lost. The clock moves a minute per change. Same seed, same data.
 */
export function seedGeneratedCompany(fake: FakePipedrive, sizes: { deals: number; persons?: number; organizations?: number; seed?: number; start?: string }): { pipeline: number; stages: number[]; dealIds: number[] } {
  const random = seededRandom(sizes.seed ?? 42);
  fake.setNow(sizes.start ?? '2026-01-05T08:00:00Z');
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const { id: pipeline, stages } = fake.addPipeline('Generated', ['Lead in', 'Contacted', 'Demo', 'Proposal', 'Negotiation']);
  const orgs = Array.from({ length: sizes.organizations ?? Math.max(1, Math.ceil(sizes.deals / 20)) }, (_, i) => fake.addOrganization(`Company ${i + 1}`));
  const people = Array.from({ length: sizes.persons ?? Math.max(1, Math.ceil(sizes.deals / 5)) }, (_, i) => fake.addPerson(`Person ${i + 1}`, [`person${i + 1}@example.com`], pick(orgs)));
  const dealIds: number[] = [];
  for (let i = 0; i < sizes.deals; i++) {
    fake.advance(60_000);
    const person = pick(people);
    dealIds.push(fake.addDeal({ title: `Deal ${i + 1}`, stage_id: stages[0]!, value: Math.round(random() * 50_000), currency: pick(['EUR', 'USD', 'GBP']), person_id: person, org_id: fake.persons.get(person)!.org_id }));
  }
  for (const id of dealIds) {
    if (random() > 1 / 3) continue;
    const moves = 1 + Math.floor(random() * 3);
    for (let m = 1; m <= moves; m++) {
      fake.advance(60_000);
      fake.updateDeal(id, { stage_id: stages[m]! });
    }
    const r = random();
    if (r < 0.3) {
      fake.advance(60_000);
      fake.updateDeal(id, { status: r < 0.15 ? 'won' : 'lost' });
    }
  }
  fake.advance(60_000);
  return { pipeline, stages, dealIds };
}
