// A local HubSpot for tests: an HTTP server answering the CRM v3 calls the connector makes, in
// the shapes HubSpot documents (list paging.next.after, search {total, results, paging} with an
// offset `after` and a result cap, v4 association batch reads with 207 for partial results, the
// error body {status, message, correlationId, category}, rate-limit headers on standard calls
// but not on search, 429 with Retry-After). It holds an in-memory CRM the test mutates, records
// every request, and injects faults: 429 storms, 5xx, and hanging or reset connections after N
// pages. The connector only ever gets its base URL.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeObjectType = 'companies' | 'contacts' | 'deals';

export interface FakeHubspotOptions {
  /** The private-app token the server accepts. */
  token?: string;
  /** Most results the server returns per page, whatever the client asks (HubSpot: 100 on lists). */
  maxPageSize?: number;
  /** The rolling window on standard (non-search) calls; HubSpot's private apps: 190 per 10 s. */
  rateLimit?: { max: number; intervalMs: number };
  /** Search calls allowed per second (HubSpot: 5). */
  searchPerSecond?: number;
  /** Results one search may page through (HubSpot: 10,000). */
  searchResultCap?: number;
  /** Custom contact properties that exist in this account (e.g. sightline_sales_value). */
  customContactProperties?: string[];
}

export interface FakeStage {
  id: string;
  label: string;
  isClosed: boolean;
  probability: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** Arrival time (ms). */
  at: number;
  status: number;
}

interface StoredObject {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
}

interface StoredPipeline {
  id: string;
  label: string;
  displayOrder: number;
  stages: FakeStage[];
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'reset';

const MODIFIED: Record<FakeObjectType, string> = { companies: 'hs_lastmodifieddate', contacts: 'lastmodifieddate', deals: 'hs_lastmodifieddate' };

const STANDARD_PROPERTIES: Record<FakeObjectType, string[]> = {
  companies: ['name', 'domain', 'lifecyclestage', 'createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  contacts: ['email', 'firstname', 'lastname', 'lifecyclestage', 'hs_lead_status', 'associatedcompanyid', 'createdate', 'lastmodifieddate', 'hs_object_id'],
  deals: ['dealname', 'amount', 'deal_currency_code', 'pipeline', 'dealstage', 'createdate', 'closedate', 'hs_is_closed', 'hs_is_closed_won', 'hs_lastmodifieddate', 'hs_object_id'],
};

/** Properties HubSpot returns when the request names none. */
const DEFAULT_PROPERTIES: Record<FakeObjectType, string[]> = {
  companies: ['name', 'domain', 'createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  contacts: ['email', 'firstname', 'lastname', 'createdate', 'lastmodifieddate', 'hs_object_id'],
  deals: ['dealname', 'amount', 'closedate', 'pipeline', 'dealstage', 'createdate', 'hs_lastmodifieddate', 'hs_object_id'],
};

const ENUM_OPTIONS: Record<string, string[]> = {
  hs_lead_status: ['NEW', 'OPEN', 'IN_PROGRESS', 'OPEN_DEAL', 'UNQUALIFIED', 'ATTEMPTED_TO_CONTACT', 'CONNECTED', 'BAD_TIMING'],
  lifecyclestage: ['subscriber', 'lead', 'marketingqualifiedlead', 'salesqualifiedlead', 'opportunity', 'customer', 'evangelist', 'other'],
};

export class FakeHubspot {
  readonly token: string;
  readonly requests: LoggedRequest[] = [];
  private server: Server | null = null;
  private baseUrl = '';
  private readonly options: Required<Omit<FakeHubspotOptions, 'token' | 'customContactProperties'>>;
  private readonly contactProperties: Set<string>;
  private readonly pipelines: StoredPipeline[] = [];
  private readonly objects: Record<FakeObjectType, Map<string, StoredObject>> = { companies: new Map(), contacts: new Map(), deals: new Map() };
  private readonly dealCompanies = new Map<string, { id: string; primary: boolean }[]>();
  private readonly dealContacts = new Map<string, string[]>();
  private nextId = 1000;
  private lastTick = 0;
  private standardCalls: number[] = [];
  private searchCalls: number[] = [];
  private dailyUsed = 0;

  // Faults
  private stormLeft = 0;
  private stormRetryAfter = 1;
  private errorsLeft = 0;
  private errorStatus = 502;
  private pagesUntilFault: number | null = null;
  private faultMode: 'hang' | 'reset' = 'hang';
  private faultActive = false;
  private readonly hung = new Set<ServerResponse>();
  private hangWaiters: (() => void)[] = [];
  private pagesServed = 0;

  constructor(options: FakeHubspotOptions = {}) {
    this.token = options.token ?? `pat-na1-${randomUUID()}`;
    this.options = {
      maxPageSize: options.maxPageSize ?? 100,
      rateLimit: options.rateLimit ?? { max: 190, intervalMs: 10_000 },
      searchPerSecond: options.searchPerSecond ?? 5,
      searchResultCap: options.searchResultCap ?? 10_000,
    };
    this.contactProperties = new Set([...STANDARD_PROPERTIES.contacts, ...(options.customContactProperties ?? [])]);
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
    this.releaseHung();
    if (!this.server) return;
    const server = this.server;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- the in-memory CRM ----

  addPipeline(pipeline: { id: string; label: string; stages: FakeStage[] }): void {
    const existing = this.pipelines.findIndex((p) => p.id === pipeline.id);
    const stored = { ...pipeline, displayOrder: existing >= 0 ? existing : this.pipelines.length };
    if (existing >= 0) this.pipelines[existing] = stored;
    else this.pipelines.push(stored);
  }

  /**
   * Creates (no id) or updates an object; HubSpot stamps the modification time (now, or `at` to
   * seed history). Returns the id.
   */
  upsert(type: FakeObjectType, properties: Record<string, string | null>, id?: string, at?: Date): string {
    const now = at ? at.toISOString() : this.tick();
    const objectId = id ?? String(this.nextId++);
    const existing = this.objects[type].get(objectId);
    const merged: Record<string, string | null> = { ...(existing?.properties ?? {}), ...properties };
    merged['hs_object_id'] = objectId;
    merged['createdate'] = existing?.properties['createdate'] ?? properties['createdate'] ?? now;
    merged[MODIFIED[type]] = now;
    if (type === 'deals') {
      const stage = this.stageOf(merged['pipeline'] ?? null, merged['dealstage'] ?? null);
      merged['hs_is_closed'] = stage ? String(stage.isClosed) : 'false';
      merged['hs_is_closed_won'] = stage ? String(stage.isClosed && stage.probability === 1) : 'false';
    }
    this.objects[type].set(objectId, { id: objectId, properties: merged, createdAt: merged['createdate'] ?? now, updatedAt: now, archived: false });
    return objectId;
  }

  get(type: FakeObjectType, id: string): StoredObject | undefined {
    return this.objects[type].get(id);
  }

  /** Sets a deal's associations (HubSpot does not move the deal's modification time for these). */
  associateDeal(dealId: string, links: { companyId?: string | null; contactIds?: string[] }): void {
    if (links.companyId !== undefined) this.dealCompanies.set(dealId, links.companyId ? [{ id: links.companyId, primary: true }] : []);
    if (links.contactIds !== undefined) this.dealContacts.set(dealId, [...links.contactIds]);
  }

  archive(type: FakeObjectType, id: string): void {
    const o = this.objects[type].get(id);
    if (o) o.archived = true;
  }

  // ---- faults ----

  /** The next `count` requests answer 429 with Retry-After (seconds). */
  rateLimitStorm(count: number, retryAfterSeconds = 1): void {
    this.stormLeft = count;
    this.stormRetryAfter = retryAfterSeconds;
  }

  /** The next `count` requests answer `status` (5xx). */
  serverErrors(count: number, status = 502): void {
    this.errorsLeft = count;
    this.errorStatus = status;
  }

  /** After `pages` more pages are served, every request hangs (or has its connection reset) until cleared. */
  failAfterPages(pages: number, mode: 'hang' | 'reset' = 'hang'): void {
    this.pagesUntilFault = pages;
    this.faultMode = mode;
    this.faultActive = false;
  }

  clearFaults(): void {
    this.stormLeft = 0;
    this.errorsLeft = 0;
    this.pagesUntilFault = null;
    this.faultActive = false;
    this.releaseHung();
  }

  /** Resolves once a request is being held by a 'hang' fault. */
  whenHanging(): Promise<void> {
    if (this.hung.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.hangWaiters.push(resolve));
  }

  /** Pages (pipeline, list and search answers) served so far. */
  get pages(): number {
    return this.pagesServed;
  }

  /** The most requests that arrived within any window of `intervalMs` (optionally of some requests only). */
  maxInWindow(intervalMs: number, filter: (r: LoggedRequest) => boolean = () => true): number {
    const times = this.requests.filter(filter).map((r) => r.at).sort((a, b) => a - b);
    let max = 0;
    let start = 0;
    for (let end = 0; end < times.length; end++) {
      while (times[end]! - times[start]! >= intervalMs) start++;
      max = Math.max(max, end - start + 1);
    }
    return max;
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const text = await readBody(req);
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const entry: LoggedRequest = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), body, at, status: 0 };
    this.requests.push(entry);
    const reply = this.route(req, url, body, at);
    if (reply === 'hang') {
      entry.status = -1;
      this.hung.add(res);
      res.on('close', () => this.hung.delete(res));
      for (const wake of this.hangWaiters.splice(0)) wake();
      return;
    }
    if (reply === 'reset') {
      entry.status = -2;
      req.socket.destroy();
      return;
    }
    entry.status = reply.status;
    res.writeHead(reply.status, { ...(reply.body === undefined ? {} : { 'content-type': 'application/json;charset=utf-8' }), ...(reply.headers ?? {}) });
    res.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
  }

  private route(req: IncomingMessage, url: URL, body: unknown, at: number): Reply {
    if (req.headers['authorization'] !== `Bearer ${this.token}`) {
      return error(401, 'INVALID_AUTHENTICATION', 'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview');
    }
    if (this.faultActive) return this.faultMode;
    const isSearch = url.pathname.endsWith('/search');
    const limitHeaders = isSearch ? {} : this.countStandard(at);
    if (this.stormLeft > 0) {
      this.stormLeft -= 1;
      return rateLimited(this.stormRetryAfter, 'TEN_SECONDLY_ROLLING', { ...limitHeaders, 'X-HubSpot-RateLimit-Remaining': '0' });
    }
    if (this.errorsLeft > 0) {
      this.errorsLeft -= 1;
      return { ...error(this.errorStatus, 'INTERNAL_ERROR', 'internal error'), headers: limitHeaders };
    }
    if (isSearch && !this.admitSearch(at)) return rateLimited(1, 'SECONDLY', {});
    if (!isSearch && Number(limitHeaders['X-HubSpot-RateLimit-Remaining']) < 0) {
      return rateLimited(Math.ceil(this.options.rateLimit.intervalMs / 1000), 'TEN_SECONDLY_ROLLING', { ...limitHeaders, 'X-HubSpot-RateLimit-Remaining': '0' });
    }
    const reply = this.answer(req.method ?? 'GET', url, body);
    if (typeof reply !== 'string') reply.headers = { ...limitHeaders, ...(reply.headers ?? {}) };
    if (typeof reply !== 'string' && reply.status === 200 && isPage(req.method ?? 'GET', url.pathname)) {
      this.pagesServed += 1;
      if (this.pagesUntilFault !== null) {
        this.pagesUntilFault -= 1;
        if (this.pagesUntilFault <= 0) {
          this.pagesUntilFault = null;
          this.faultActive = true;
        }
      }
    }
    return reply;
  }

  /** Counts a standard call in the rolling window; Remaining goes negative when over the limit. */
  private countStandard(at: number): Record<string, string> {
    const { max, intervalMs } = this.options.rateLimit;
    this.standardCalls = this.standardCalls.filter((t) => at - t < intervalMs);
    const over = this.standardCalls.length >= max;
    if (!over) {
      this.standardCalls.push(at);
      this.dailyUsed += 1;
    }
    return {
      'X-HubSpot-RateLimit-Daily': '500000',
      'X-HubSpot-RateLimit-Daily-Remaining': String(500000 - this.dailyUsed),
      'X-HubSpot-RateLimit-Interval-Milliseconds': String(intervalMs),
      'X-HubSpot-RateLimit-Max': String(max),
      'X-HubSpot-RateLimit-Remaining': String(over ? -1 : max - this.standardCalls.length),
    };
  }

  private admitSearch(at: number): boolean {
    this.searchCalls = this.searchCalls.filter((t) => at - t < 1000);
    if (this.searchCalls.length >= this.options.searchPerSecond) return false;
    this.searchCalls.push(at);
    return true;
  }

  private answer(method: string, url: URL, body: unknown): Reply {
    const path = url.pathname;
    if (method === 'GET' && path === '/crm/v3/pipelines/deals') return { status: 200, body: { results: this.pipelines.map((p) => this.pipelineJson(p)) } };
    let m = /^\/crm\/v3\/objects\/(companies|contacts|deals)$/.exec(path);
    if (m && method === 'GET') return this.list(m[1] as FakeObjectType, url.searchParams);
    m = /^\/crm\/v3\/objects\/(companies|contacts|deals)\/search$/.exec(path);
    if (m && method === 'POST') return this.search(m[1] as FakeObjectType, body);
    m = /^\/crm\/v4\/associations\/deals\/(companies|contacts)\/batch\/read$/.exec(path);
    if (m && method === 'POST') return this.associations(m[1] as 'companies' | 'contacts', body);
    m = /^\/crm\/v3\/objects\/contacts\/([^/]+)$/.exec(path);
    if (m && method === 'PATCH') return this.patchContact(decodeURIComponent(m[1]!), body);
    return error(404, 'OBJECT_NOT_FOUND', `No route for ${method} ${path}`);
  }

  private pipelineJson(p: StoredPipeline): unknown {
    const stamp = new Date(0).toISOString();
    return {
      id: p.id, label: p.label, displayOrder: p.displayOrder, createdAt: stamp, updatedAt: stamp, archived: false,
      stages: p.stages.map((s, i) => ({
        id: s.id, label: s.label, displayOrder: i, createdAt: stamp, updatedAt: stamp, archived: false, writePermissions: 'CRM_PERMISSIONS_ENFORCEMENT',
        // HubSpot sends stage metadata values as strings.
        metadata: { isClosed: String(s.isClosed), probability: s.probability.toFixed(1) },
      })),
    };
  }

  private list(type: FakeObjectType, params: URLSearchParams): Reply {
    const limit = Number(params.get('limit') ?? '10');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return error(400, 'VALIDATION_ERROR', `limit must be between 1 and 100, got ${params.get('limit')}`);
    const pageSize = Math.min(limit, this.options.maxPageSize);
    const archived = params.get('archived') === 'true';
    const after = params.get('after');
    const all = [...this.objects[type].values()].filter((o) => o.archived === archived).sort((a, b) => Number(a.id) - Number(b.id));
    const start = after === null ? 0 : all.findIndex((o) => Number(o.id) >= Number(after));
    const page = start < 0 ? [] : all.slice(start, start + pageSize);
    const following = start < 0 ? undefined : all[start + pageSize];
    const properties = params.get('properties')?.split(',').filter(Boolean) ?? DEFAULT_PROPERTIES[type];
    const associations = params.get('associations')?.split(',').filter(Boolean) ?? [];
    return {
      status: 200,
      body: {
        results: page.map((o) => ({ ...this.objectJson(type, o, properties), ...this.listAssociations(type, o.id, associations) })),
        ...(following ? { paging: { next: { after: following.id, link: `${this.baseUrl}/crm/v3/objects/${type}?after=${following.id}` } } } : {}),
      },
    };
  }

  private objectJson(type: FakeObjectType, o: StoredObject, properties: string[]): Record<string, unknown> {
    const wanted = new Set([...properties, 'createdate', MODIFIED[type], 'hs_object_id']);
    const props: Record<string, string | null> = {};
    for (const name of wanted) props[name] = o.properties[name] ?? null;
    return { id: o.id, properties: props, createdAt: o.createdAt, updatedAt: o.updatedAt, archived: o.archived };
  }

  private listAssociations(type: FakeObjectType, id: string, wanted: string[]): Record<string, unknown> {
    if (type !== 'deals') return {};
    const out: Record<string, { results: { id: string; type: string }[] }> = {};
    const companies = this.dealCompanies.get(id) ?? [];
    if (wanted.includes('companies') && companies.length > 0) {
      out['companies'] = {
        results: companies.flatMap((c) => (c.primary
          ? [{ id: c.id, type: 'deal_to_company' }, { id: c.id, type: 'deal_to_company_unlabeled' }]
          : [{ id: c.id, type: 'deal_to_company_unlabeled' }])),
      };
    }
    const contacts = this.dealContacts.get(id) ?? [];
    if (wanted.includes('contacts') && contacts.length > 0) out['contacts'] = { results: contacts.map((c) => ({ id: c, type: 'deal_to_contact' })) };
    return Object.keys(out).length > 0 ? { associations: out } : {};
  }

  private search(type: FakeObjectType, body: unknown): Reply {
    const request = (body ?? {}) as {
      filterGroups?: { filters?: { propertyName: string; operator: string; value?: string }[] }[];
      sorts?: ({ propertyName: string; direction?: string } | string)[];
      properties?: string[];
      limit?: number;
      after?: string | number;
    };
    const limit = request.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) return error(400, 'VALIDATION_ERROR', `limit must be between 1 and 200, got ${String(limit)}`);
    const offset = request.after === undefined ? 0 : Number(request.after);
    if (!Number.isInteger(offset) || offset < 0) return error(400, 'VALIDATION_ERROR', `after must be a non-negative integer, got ${String(request.after)}`);
    if (offset >= this.options.searchResultCap) {
      return error(400, 'VALIDATION_ERROR', `Search results are limited to ${this.options.searchResultCap}; narrow the filters instead of paging further.`);
    }
    const groups = request.filterGroups ?? [];
    let matches = [...this.objects[type].values()].filter((o) => !o.archived && (groups.length === 0 || groups.some((g) => (g.filters ?? []).every((f) => matchFilter(o, f)))));
    const sort = request.sorts?.[0];
    const sortBy = typeof sort === 'string' ? { propertyName: sort.replace(/^-/, ''), direction: sort.startsWith('-') ? 'DESCENDING' : 'ASCENDING' } : sort;
    matches = matches.sort((a, b) => Number(a.id) - Number(b.id));
    if (sortBy) {
      const sign = sortBy.direction === 'DESCENDING' ? -1 : 1;
      matches = matches.sort((a, b) => sign * compareValues(a.properties[sortBy.propertyName] ?? null, b.properties[sortBy.propertyName] ?? null));
    }
    const pageSize = Math.min(limit, this.options.maxPageSize);
    const page = matches.slice(offset, offset + pageSize);
    const nextOffset = offset + page.length;
    const properties = request.properties && request.properties.length > 0 ? request.properties : DEFAULT_PROPERTIES[type];
    return {
      status: 200,
      body: {
        total: matches.length,
        results: page.map((o) => this.objectJson(type, o, properties)),
        ...(nextOffset < matches.length ? { paging: { next: { after: String(nextOffset) } } } : {}),
      },
    };
  }

  private associations(to: 'companies' | 'contacts', body: unknown): Reply {
    const inputs = ((body ?? {}) as { inputs?: { id: string }[] }).inputs ?? [];
    const typeId = to === 'companies' ? 5 : 3;
    const results: unknown[] = [];
    const errors: unknown[] = [];
    const started = new Date().toISOString();
    for (const { id } of inputs) {
      const targets = to === 'companies' ? (this.dealCompanies.get(id) ?? []) : (this.dealContacts.get(id) ?? []).map((c) => ({ id: c, primary: false }));
      if (!this.objects.deals.has(id) || targets.length === 0) {
        errors.push({
          status: 'error', category: 'OBJECT_NOT_FOUND', subCategory: 'crm.associations.NO_ASSOCIATIONS_FOUND',
          message: `No ${to === 'companies' ? 'company' : 'contact'} is associated with deal ${id}.`, context: { fromObjectId: [id] },
        });
        continue;
      }
      results.push({
        from: { id },
        to: targets.map((t) => ({
          toObjectId: Number(t.id),
          associationTypes: [
            ...(t.primary ? [{ category: 'HUBSPOT_DEFINED', typeId, label: 'Primary' }] : []),
            { category: 'HUBSPOT_DEFINED', typeId: to === 'companies' ? 341 : 3, label: null },
          ],
        })),
      });
    }
    const doc = { status: 'COMPLETE', results, startedAt: started, completedAt: new Date().toISOString(), ...(errors.length > 0 ? { numErrors: errors.length, errors } : {}) };
    return { status: errors.length > 0 ? 207 : 200, body: doc };
  }

  private patchContact(id: string, body: unknown): Reply {
    const contact = this.objects.contacts.get(id);
    if (!contact || contact.archived) return error(404, 'OBJECT_NOT_FOUND', 'resource not found');
    const properties = ((body ?? {}) as { properties?: Record<string, unknown> }).properties ?? {};
    const problems: unknown[] = [];
    for (const [name, value] of Object.entries(properties)) {
      if (!this.contactProperties.has(name)) {
        problems.push({ isValid: false, message: `Property "${name}" does not exist`, error: 'PROPERTY_DOESNT_EXIST', name });
      } else if (ENUM_OPTIONS[name] && value !== '' && !ENUM_OPTIONS[name].includes(String(value))) {
        problems.push({ isValid: false, message: `${String(value)} was not one of the allowed options`, error: 'INVALID_OPTION', name });
      }
    }
    if (problems.length > 0) return error(400, 'VALIDATION_ERROR', `Property values were not valid: ${JSON.stringify(problems)}`);
    const values = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v === '' || v === null ? null : String(v)]));
    this.upsert('contacts', values, id);
    const updated = this.objects.contacts.get(id)!;
    return { status: 200, body: this.objectJson('contacts', updated, Object.keys(properties)) };
  }

  private stageOf(pipelineId: string | null, stageId: string | null): FakeStage | undefined {
    return this.pipelines.find((p) => p.id === pipelineId)?.stages.find((s) => s.id === stageId);
  }

  /** Modification times never go back (several writes may share a millisecond, as in HubSpot). */
  private tick(): string {
    this.lastTick = Math.max(Date.now(), this.lastTick);
    return new Date(this.lastTick).toISOString();
  }

  private releaseHung(): void {
    for (const res of this.hung) res.destroy();
    this.hung.clear();
  }
}

/** A documented HubSpot error body. */
function error(status: number, category: string, message: string): { status: number; body: unknown } {
  return { status, body: { status: 'error', message, correlationId: randomUUID(), category } };
}

function rateLimited(retryAfterSeconds: number, policyName: string, headers: Record<string, string>): Reply {
  return {
    status: 429,
    headers: { ...headers, 'Retry-After': String(retryAfterSeconds) },
    body: {
      status: 'error', message: `You have reached your ${policyName.toLowerCase()} limit.`, errorType: 'RATE_LIMIT',
      correlationId: randomUUID(), policyName, requestId: randomUUID(), category: 'RATE_LIMITS',
    },
  };
}

function isPage(method: string, path: string): boolean {
  return (method === 'GET' && (path === '/crm/v3/pipelines/deals' || /^\/crm\/v3\/objects\/[a-z]+$/.test(path))) || (method === 'POST' && path.endsWith('/search'));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A property value as a number when it is one (or a date), so dates compare with millisecond filters. */
function comparable(value: string | null): number | string | null {
  if (value === null) return null;
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? value.toLowerCase() : ms;
}

function compareValues(a: string | null, b: string | null): number {
  const x = comparable(a);
  const y = comparable(b);
  if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return String(x).localeCompare(String(y));
}

function matchFilter(o: StoredObject, f: { propertyName: string; operator: string; value?: string }): boolean {
  const actual = o.properties[f.propertyName] ?? null;
  if (f.operator === 'HAS_PROPERTY') return actual !== null;
  if (f.operator === 'NOT_HAS_PROPERTY') return actual === null;
  if (actual === null) return false;
  const c = compareValues(actual, f.value ?? null);
  switch (f.operator) {
    case 'EQ': return c === 0;
    case 'NEQ': return c !== 0;
    case 'GT': return c > 0;
    case 'GTE': return c >= 0;
    case 'LT': return c < 0;
    case 'LTE': return c <= 0;
    default: return false;
  }
}


/** Ids of the example CRM, by a short name. */
export interface ExampleCrm {
  companies: { acme: string; globex: string; initech: string };
  contacts: { ada: string; bob: string; cy: string; dee: string; eve: string };
  deals: { expansion: string; pilot: string; lost: string; renewal: string };
}

/** Two pipelines, three companies, five contacts and four deals: small, but every case is there. */
export function seedExampleCrm(fake: FakeHubspot, at: Date = new Date(Date.now() - 3_600_000)): ExampleCrm {
  fake.addPipeline({
    id: 'default',
    label: 'Sales Pipeline',
    stages: [
      { id: 'appointmentscheduled', label: 'Appointment Scheduled', isClosed: false, probability: 0.2 },
      { id: 'qualifiedtobuy', label: 'Qualified To Buy', isClosed: false, probability: 0.4 },
      { id: 'contractsent', label: 'Contract Sent', isClosed: false, probability: 0.9 },
      { id: 'closedwon', label: 'Closed Won', isClosed: true, probability: 1 },
      { id: 'closedlost', label: 'Closed Lost', isClosed: true, probability: 0 },
    ],
  });
  fake.addPipeline({
    id: 'renewals',
    label: 'Renewals',
    stages: [
      { id: 'renewal_open', label: 'Up for renewal', isClosed: false, probability: 0.5 },
      { id: 'renewal_done', label: 'Renewed', isClosed: true, probability: 1 },
      { id: 'renewal_paused', label: 'Paused', isClosed: true, probability: 0.5 },
    ],
  });
  const companies = {
    acme: fake.upsert('companies', { name: 'Acme', domain: 'acme.com', lifecyclestage: 'customer' }, undefined, at),
    globex: fake.upsert('companies', { name: 'Globex', domain: 'globex.com', lifecyclestage: 'opportunity' }, undefined, at),
    initech: fake.upsert('companies', { name: 'Initech', domain: 'initech.com', lifecyclestage: 'lead' }, undefined, at),
  };
  const contact = (email: string, lifecyclestage: string, company: string | null): string =>
    fake.upsert('contacts', { email, lifecyclestage, associatedcompanyid: company }, undefined, at);
  const contacts = {
    ada: contact('ada@acme.com', 'lead', companies.acme),
    bob: contact('bob@acme.com', 'customer', companies.acme),
    cy: contact('cy@globex.com', 'opportunity', companies.globex),
    dee: contact('dee@initech.com', 'lead', companies.initech),
    eve: contact('eve@example.com', 'subscriber', null),
  };
  const deal = (props: Record<string, string | null>, companyId: string, contactIds: string[]): string => {
    const id = fake.upsert('deals', props, undefined, at);
    fake.associateDeal(id, { companyId, contactIds });
    return id;
  };
  const deals = {
    expansion: deal({ dealname: 'Acme expansion', amount: '12000', deal_currency_code: 'EUR', pipeline: 'default', dealstage: 'qualifiedtobuy', closedate: '2026-09-30T00:00:00.000Z' }, companies.acme, [contacts.ada, contacts.bob]),
    pilot: deal({ dealname: 'Globex pilot', amount: '5000', deal_currency_code: 'USD', pipeline: 'default', dealstage: 'closedwon', closedate: '2026-03-01T10:00:00.000Z' }, companies.globex, [contacts.cy]),
    lost: deal({ dealname: 'Initech lost', amount: '800', deal_currency_code: 'USD', pipeline: 'default', dealstage: 'closedlost', closedate: '2026-02-01T10:00:00.000Z' }, companies.initech, [contacts.dee]),
    renewal: deal({ dealname: 'Acme renewal', amount: '', deal_currency_code: null, pipeline: 'renewals', dealstage: 'renewal_open', closedate: null }, companies.acme, [contacts.bob]),
  };
  return { companies, contacts, deals };
}
