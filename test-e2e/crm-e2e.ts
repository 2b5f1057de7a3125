// What the CRM connector e2e suites (salesforce.suite.ts, pipedrive.suite.ts) share: admin calls on
// crm-sync, a sync started and waited for, the public API read page by page (milestones per channel
// included), people who browse from distinct channels and convert with their email (with the
// oracle's events alongside), the conversion ids contacts filed for them, the write-back rows, the
// outcome PATCH, and a pass-through proxy that can hold a provider's answers to writes.
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OracleEvent, RuleModel } from '../services/attribution/test/oracle';
import type { RunningProcess } from '@sightline/kit';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import { startStack, type Stack } from './stack';

export type Json = Record<string, unknown>;

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

// ───────────────────────────── crm-sync's admin API ─────────────────────────────

/** Admin calls on a crm-sync (or all-in-one) admin port. */
export function crmAdmin(adminUrl: string, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const r = await fetch(`${adminUrl}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json().catch(() => ({}))) as Json };
  };
}
export type CrmAdmin = ReturnType<typeof crmAdmin>;

/**
 * Connects a CRM through the admin API; returns the connection id. `secret`: a piece of the
 * credentials that must not come back in the answer.
 */
export async function connectCrm(admin: CrmAdmin, website: { id: string; workspace_id: string }, provider: string, credentials: Json, settings: Json, secret: string): Promise<string> {
  const created = await admin('POST', '/crm/connections', { website_id: website.id, workspace_id: website.workspace_id, provider, credentials, settings });
  expect({ status: created.status, error: created.status === 201 ? null : created.body }).toEqual({ status: 201, error: null });
  expect(JSON.stringify(created.body)).not.toContain(secret);
  return String(created.body['id']);
}

/** Starts a sync and waits until the connection reports it finished (fails on a sync error or a pause). */
export async function syncAndWait(admin: CrmAdmin, id: string, full = false, timeoutMs = 110_000): Promise<Json> {
  const before = (await admin('GET', `/crm/connections/${id}`)).body;
  const started = await admin('POST', `/crm/connections/${id}/sync${full ? '?full=true' : ''}`);
  expect(started.status).toBe(202);
  return waitFor('the sync to finish', async () => {
    const now = (await admin('GET', `/crm/connections/${id}`)).body;
    const finished = !now['sync_in_progress'] && (now['last_success_at'] !== before['last_success_at'] || now['last_error_at'] !== before['last_error_at'] || now['paused_until'] !== before['paused_until']);
    if (!finished) return undefined;
    if (now['last_error_at'] !== before['last_error_at'] || now['paused_until']) throw new Error(`sync did not succeed: ${JSON.stringify(now)}`);
    return now;
  }, timeoutMs);
}

/** The connection's write-back rows to the CRM for a conversion (skipped ones left out). */
export async function crmWritebacks(admin: CrmAdmin, websiteId: string, conversionId: string): Promise<Json[]> {
  const r = await admin('GET', `/crm/writebacks?website_id=${websiteId}&conversion_id=${conversionId}`);
  expect(r.status).toBe(200);
  return (r.body['data'] as Json[]).filter((row) => row['target'] === 'crm' && row['status'] !== 'skipped');
}

/** Waits until every write-back row to the CRM of a conversion is done; returns them. */
export async function writebacksDone(admin: CrmAdmin, websiteId: string, conversionId: string, timeoutMs = 60_000): Promise<Json[]> {
  return waitFor('the write-back done', async () => {
    const r = await crmWritebacks(admin, websiteId, conversionId);
    return r.length > 0 && r.every((row) => row['status'] === 'done') ? r : undefined;
  }, timeoutMs);
}

/** PATCH /v1/contacts/{id} with an Idempotency-Key (`<prefix>-<conversion id>`); expects 200. */
export async function patchOutcome(base: string, key: string, conversionId: string, body: Json, prefix = 'sf'): Promise<void> {
  const r = await fetch(`${base}/v1/contacts/${conversionId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `${prefix}-${conversionId}` },
    body: JSON.stringify(body),
  });
  expect({ status: r.status }).toEqual({ status: 200 });
}

// ───────────────────────────── the public API ─────────────────────────────

export type Page = Json & { data: Json[]; meta: Json; next_cursor?: string };

/** The public API with an API key: single pages, every row of a list, totals, milestones per channel in `window`. */
export function publicApi(base: string, key: string, window: { fromMs: number; toMs: number }) {
  const windowQuery = `from=${encodeURIComponent(new Date(window.fromMs).toISOString())}&to=${encodeURIComponent(new Date(window.toMs).toISOString())}`;
  const get = async (path: string): Promise<{ status: number; body: Page }> => {
    const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: r.status, body: (await r.json()) as Page };
  };
  /** Every row of a paged list (limit 200 a page). */
  const all = async (path: string): Promise<Json[]> => {
    const out: Json[] = [];
    let cursor: string | undefined;
    do {
      const r = await get(`${path}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      out.push(...r.body.data);
      cursor = r.body.next_cursor;
    } while (cursor);
    return out;
  };
  const totalOf = async (path: string): Promise<number> => {
    const r = await get(`${path}?limit=1&total_count=true`);
    expect(r.status).toBe(200);
    return Number(r.body.meta['total_count']);
  };
  /** Milestones per channel (zero rows left out); `unknownOk`: answers 400 (not failing) while the stage is not in the workspace's vocabulary yet. */
  const milestonesByChannel = async (stage: string, model?: RuleModel, unknownOk = false): Promise<{ rows: Record<string, number>; meta: Json; status: number; problem?: Json }> => {
    const r = await get(`/v1/metrics?metrics=milestones&stages=${stage}&group_by=channel${model ? `&attribution=${model}` : ''}&limit=100&${windowQuery}`);
    if (unknownOk && r.status === 400) return { rows: {}, meta: {}, status: 400, problem: r.body };
    expect({ status: r.status, body: r.status === 200 ? null : r.body }).toEqual({ status: 200, body: null });
    const rows: Record<string, number> = {};
    for (const row of r.body.data) if (Number(row['milestones']) !== 0) rows[String(row['channel'])] = Number(row['milestones']);
    return { rows, meta: r.body.meta, status: r.status };
  };
  return { get, all, totalOf, milestonesByChannel };
}
export type PublicApi = ReturnType<typeof publicApi>;

export const rounded = (rows: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, Math.round(v * 1e9) / 1e9]));
export const sum = (rows: Record<string, number>): number => Math.round(Object.values(rows).reduce((a, b) => a + b, 0) * 1e6) / 1e6;

// ───────────────────────────── browsing people ─────────────────────────────

interface ChannelVisit {
  channel: string;
  url: (tag: string) => string;
  referrer: string | null;
}

/** Visits and the channel the documented classification gives them (checked against each person's journey); `c` names the campaigns. */
const channelsFor = (c: string): Record<string, ChannelVisit> => ({
  'Paid Search': { channel: 'Paid Search', url: (t) => `https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=${c}-spring&gclid=${c}-${t}`, referrer: 'https://www.google.com/' },
  'Organic Search': { channel: 'Organic Search', url: () => 'https://shop.test/blog/attribution', referrer: 'https://www.google.com/' },
  Email: { channel: 'Email', url: () => `https://shop.test/?utm_source=newsletter&utm_medium=email&utm_campaign=${c}-nov`, referrer: null },
  Referral: { channel: 'Referral', url: () => 'https://shop.test/partners', referrer: 'https://partner.example/deals' },
  'Paid Social': { channel: 'Paid Social', url: (t) => `https://shop.test/?utm_source=facebook&utm_medium=paid_social&utm_campaign=${c}-launch&fbclid=IwAR-${t}`, referrer: 'https://l.facebook.com/' },
  Direct: { channel: 'Direct', url: () => 'https://shop.test/', referrer: null },
});
const JOURNEYS: string[][] = [
  ['Paid Search'], ['Organic Search'], ['Email'], ['Referral'],
  ['Paid Search', 'Email'], ['Organic Search', 'Paid Search'], ['Email', 'Referral', 'Paid Search'], ['Paid Social', 'Direct'],
  ['Direct', 'Email'], ['Referral', 'Organic Search', 'Email', 'Paid Search'], ['Paid Social'], ['Paid Search', 'Paid Social', 'Organic Search'],
];

/** What browsing added to a CRM person. */
export interface Browsed {
  /** The person's email as the CRM has it. */
  email: string;
  aid: string;
  channels: string[];
  /** Visit start times (ms), one per channel. */
  visits: number[];
  convertedAt: number;
  /** Filled in by findConversions. */
  conversionId: string;
}

/**
 * Each person visits (2 page views per visit, visits 7 hours apart, ending 3 days before `t0`) and
 * converts 2.5 days before `t0` with its email (every fifth in upper case: the match is
 * case-insensitive); the oracle's events are returned alongside. `campaign` prefixes the campaign
 * names and click ids.
 */
export async function browseAndConvert<P extends { email: string }>(base: string, publicId: string, key: string, people: P[], t0: number, campaign = 'sf'): Promise<{ browsers: (P & Browsed)[]; events: OracleEvent[] }> {
  const CHANNELS = channelsFor(campaign);
  const browsers: (P & Browsed)[] = [];
  const events: OracleEvent[] = [];
  const conversions: Json[] = [];
  for (const [i, person] of people.entries()) {
    const channels = JOURNEYS[i % JOURNEYS.length]!;
    const aid = randomUUID();
    const visits = channels.map((_, k) => t0 - 3 * DAY - (channels.length - 1 - k) * 7 * HOUR - i * MINUTE);
    for (const [k, name] of channels.entries()) {
      const spec = CHANNELS[name]!;
      const url = spec.url(`${i}-${k}`);
      expect(await sendVisit(base, publicId, { aid, at: visits[k]!, url, referrer: spec.referrer, key })).toBe(202);
      const clickIds: Record<string, string> = {};
      const params = new URL(url).searchParams;
      for (const id of ['gclid', 'fbclid']) if (params.get(id)) clickIds[id] = params.get(id)!;
      // The two page views sendVisit posts: the landing (with the campaign) and /pricing a minute later.
      for (const [j, hitUrl] of [url, 'https://shop.test/pricing'].entries()) {
        events.push({
          event_id: `${aid}-${k}-${j}`, origin: 'tracker', event_type: 'pageview', event_name: null, occurred_at: new Date(visits[k]! + j * MINUTE).toISOString(),
          anonymous_id: aid, email: null, phone: null, revenue: null, url: hitUrl, page: new URL(hitUrl).pathname,
          channel: j === 0 ? spec.channel : 'Internal', source: null, medium: null, campaign: null, term: null, content: null, click_ids: j === 0 ? clickIds : {},
        });
      }
    }
    const convertedAt = t0 - 2.5 * DAY - i * MINUTE;
    const email = i % 5 === 0 ? person.email.toUpperCase() : person.email;
    conversions.push({ event_type: 'conversion', event_name: 'demo_request', anonymous_id: aid, email, occurred_at: new Date(convertedAt).toISOString() });
    events.push({
      event_id: `conv-${aid}`, origin: 'api', event_type: 'conversion', event_name: 'demo_request', occurred_at: new Date(convertedAt).toISOString(),
      anonymous_id: aid, email, phone: null, revenue: null, url: null, page: null, channel: 'Direct', source: null, medium: null, campaign: null, term: null, content: null, click_ids: {},
    });
    browsers.push({ ...person, email: person.email, aid, channels: channels.map((n) => CHANNELS[n]!.channel), visits, convertedAt, conversionId: '' });
  }
  const r = await fetch(`${base}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: conversions }),
  });
  expect(((await r.json()) as Json)['accepted']).toBe(conversions.length);
  return { browsers, events };
}

/** The conversion id contacts filed for each browser's email. */
export async function findConversions(base: string, key: string, browsers: Browsed[], t0: number): Promise<void> {
  const window = `from=${encodeURIComponent(new Date(t0 - 10 * DAY).toISOString())}&to=${encodeURIComponent(new Date(t0 + DAY).toISOString())}`;
  for (const b of browsers) {
    b.conversionId = await waitFor(`${b.email} in contacts`, async () => {
      const listed = await fetch(`${base}/v1/contacts?email=${encodeURIComponent(b.email)}&${window}`, { headers: { authorization: `Bearer ${key}` } });
      if (listed.status !== 200) return undefined;
      const id = ((await listed.json()) as { data: Json[] }).data[0]?.['id'];
      return typeof id === 'string' ? id : undefined;
    });
  }
}

/** Waits until attribution holds each browser's sessions with the channels the oracle is given, and checks them. */
export async function expectJourneys(api: PublicApi, browsers: Browsed[]): Promise<void> {
  for (const b of browsers) {
    const channels = await waitFor(`${b.email}'s journey`, async () => {
      const r = await api.get(`/v1/contacts/${b.conversionId}/journey`);
      return r.status === 200 && r.body.data.length === b.channels.length ? r.body.data.map((s) => s['channel']) : undefined;
    });
    expect({ email: b.email, channels }).toEqual({ email: b.email, channels: b.channels });
  }
}

// ───────────────────────────── a proxy that holds a provider's answers ─────────────────────────────

/**
 * A pass-through proxy in front of a provider's stand-in. While `holding`, a write (PATCH by
 * default; `holdMethods` names others, e.g. an ad platform's POST uploads) reaches the stand-in
 * (which applies it) but its answer never comes back, as when the caller dies mid-call. Every
 * PATCH body is recorded. `rewrite` may change an answer (status 200 ones) on its way back, given
 * the request path and the proxy's own URL.
 */
export interface HoldingProxy {
  url: string;
  holding: boolean;
  held: number;
  patches: { path: string; body: Json }[];
  close(): Promise<void>;
}

export async function holdingProxy(
  target: string,
  rewrite?: (path: string, answer: Buffer, proxyUrl: string) => Buffer,
  holdMethods: readonly string[] = ['PATCH'],
): Promise<HoldingProxy> {
  const parked: ServerResponse[] = [];
  const state = { holding: false, held: 0, url: '' };
  const patches: { path: string; body: Json }[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(chunks);
      if (req.method === 'PATCH') patches.push({ path: req.url ?? '', body: JSON.parse(sent.toString('utf8') || '{}') as Json });
      const headers = { ...req.headers, host: new URL(target).host };
      delete headers['accept-encoding'];
      const upstream = httpRequest(`${target}${req.url ?? '/'}`, { method: req.method, headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          if (state.holding && holdMethods.includes(req.method ?? '')) {
            state.held += 1;
            parked.push(res);
            return;
          }
          let out: Buffer = Buffer.concat(body);
          if (rewrite && answer.statusCode === 200) out = rewrite(req.url ?? '/', out, state.url);
          const outHeaders = { ...answer.headers };
          delete outHeaders['content-length'];
          delete outHeaders['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, { ...outHeaders, 'content-length': String(out.length) });
          res.end(out);
        });
      });
      upstream.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      upstream.end(sent);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: state.url,
    patches,
    get holding() {
      return state.holding;
    },
    set holding(value: boolean) {
      state.holding = value;
    },
    get held() {
      return state.held;
    },
    close: async () => {
      for (const res of parked) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface CrmStack {
  stack: Stack;
  proc: RunningProcess;
  base: string;
  admin: CrmAdmin;
  publicId: string;
  website: { id: string; workspace_id: string };
  key: string;
  api: PublicApi;
}

/**
 * The services of a CRM e2e with a workspace, a website (shop.test) and a key: the schedules never
 * fire during a test (syncs start through the admin API).
 */
export async function startCrmStack(targets: string[], env: Record<string, string>, workspaceName: string, window: { fromMs: number; toMs: number }): Promise<CrmStack> {
  const stack = await startStack({ targets, env: { ...env, SIGHTLINE_CRM_SYNC_CRON: '0 0 1 1 *', SIGHTLINE_AD_SPEND_PULL_CRON: '0 0 1 1 *' } });
  const proc = stack.proc;
  const base = `http://127.0.0.1:${proc.publicPort}`;
  const post = adminOf(proc);
  const ws = await post('/workspaces', { name: workspaceName, plan: 'internal', timezone: 'UTC', currency: 'USD' });
  const site = await post(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
  const key = String((await post('/keys', { workspace_id: ws['id'] }))['key']);
  return {
    stack, proc, base, key,
    admin: crmAdmin(`http://127.0.0.1:${proc.adminPort}`, proc.settings.adminToken),
    publicId: String(site['public_id']),
    website: { id: String(site['id']), workspace_id: String(ws['id']) },
    api: publicApi(base, key, window),
  };
}
