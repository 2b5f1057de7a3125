// Write-back end to end in one process (PGlite, in-process bus): the contacts module files a
// conversion and takes the PATCH; its outcome.writeback_requested reaches crm-sync's write-back
// part, which pushes to the CRM through a test connector (the registry is not ours to extend, so
// the part takes the lookup as an override) and uploads to the stand-in ad platforms; the status
// comes back as outcome.writeback_updated and shows on GET /contacts/{id}. The worker's clock is
// the test's, so backoff is stepped over instead of waited for.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  createBus,
  createLogger,
  createOutbox,
  defineStandIn,
  loadConfig,
  startModules,
  type Bus,
  type RunningProcess,
  type SqlStore,
} from '@sightline/kit';
import { MESSAGE_EXAMPLES, messageValidator, openApiDocument, type ApiRequest, type ApiResponse, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { createContactsModule } from '@sightline/service-contacts';
import { ConnectionsRepo } from '../connections/connections.repo';
import { credentialsBox } from '../connections/credentials';
import { ProviderError, type Connector, type Credentials, type PullPage, type PushResult, type PushTarget } from '../connectors/connector';
import type { CrmSyncOptions } from '../deps';
import { googleError, startAdPlatformsServer, type AdPlatformsServer } from '../../test/ad-platforms-server';
import { writebackParts, type WritebackParts } from './writeback.parts';

const CREDENTIALS_KEY = 'writeback-test-credentials-key';
const MAX_ATTEMPTS = 3;

/** A CRM with two contacts; push writes the changed fields onto the record it is pointed at. */
class TestCrm implements Connector {
  readonly provider = 'testcrm';
  readonly records = new Map<string, { email: string; fields: Record<string, unknown> }>();
  readonly pushes: { crmId: string; request: OutcomeWritebackRequestedV1; target: PushTarget | undefined }[] = [];
  /** Thrown by the next pushes, in order. */
  failures: Error[] = [];
  /** Thrown by every push while set. */
  failing: Error | null = null;

  async *pull(): AsyncIterable<PullPage> {
    // Write-back only: nothing to pull.
  }

  async push(credentials: Credentials, request: OutcomeWritebackRequestedV1, _signal: AbortSignal, target?: PushTarget): Promise<PushResult> {
    if (credentials['api_key'] !== 'crm-secret') throw new ProviderError('testcrm: bad api key', 401, false);
    const failure = this.failures.shift() ?? this.failing;
    if (failure) throw failure;
    const crmId = target?.crm_id ?? [...this.records].find(([, r]) => r.email === request.email?.toLowerCase())?.[0];
    if (!crmId || !this.records.has(crmId)) throw new ProviderError(`testcrm: no contact ${request.email}`, 404, false);
    const fields: PushResult['fields'] = {};
    for (const change of request.changes) fields[change.field] = change.field in request.current ? request.current[change.field as keyof typeof request.current] : change.new_value;
    Object.assign(this.records.get(crmId)!.fields, fields);
    this.pushes.push({ crmId, request, target });
    return { crm_id: crmId, fields };
  }
}

interface Site {
  website: { id: string; domain: string; timezone: string; currency: string };
  workspace: ApiRequest['workspace'];
}

describe('outcome write-back (contacts + crm-sync in one process)', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let caller: Bus;
  let ads: AdPlatformsServer;
  let crmSql: SqlStore;
  let parts: WritebackParts;
  let skewMs = 0;
  const crm = new TestCrm();
  const box = credentialsBox(CREDENTIALS_KEY);
  const namespace = `writeback${Date.now()}`;
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: JSON.parse(JSON.stringify(openApiDocument.components).replace(/"#\/components/g, '"doc#/components')) });

  const now = () => new Date(Date.now() + skewMs);
  const advance = (ms: number) => {
    skewMs += ms;
  };

  /** crm-sync as index.ts wires it, limited to the write-back part, with the test's seams. */
  const crmSyncModule = (options: CrmSyncOptions) =>
    defineStandIn({
      name: 'crm-sync',
      needs: { postgres: { schema: 'crm_sync', migrationsDir: join(__dirname, '..', '..', 'migrations', 'postgres') } },
      async create(ctx) {
        const sql = ctx.postgres;
        const outbox = createOutbox(sql, ctx.bus, ctx.logger);
        crmSql = sql;
        parts = writebackParts({
          sql, outbox, bus: ctx.bus, logger: ctx.logger, settings: ctx.settings, options,
          writeback: { connectorFor: (provider) => (provider === crm.provider ? crm : null), now, policy: { maxAttempts: MAX_ATTEMPTS } },
        });
        return {
          consumers: parts.consumers,
          adminRoutes: parts.adminRoutes,
          async start() {
            outbox.start();
          },
          async stop() {
            await parts.stop();
            await outbox.stop();
          },
        };
      },
    });

  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  const apiRequest = (site: Site, operation: string, init: Partial<ApiRequest>): ApiRequest => ({
    operation, request_id: 'writeback-test', workspace: site.workspace, website: site.website,
    key: { id: 'key1', scopes: ['conversions:read', 'conversions:write', 'pii:read'] }, params: {}, query: {}, body: null, headers: {}, ...init,
  });

  type Detail = { data: Record<string, unknown> & { writeback: Record<string, unknown>[] } };
  const detail = async (site: Site, id: string) =>
    (await caller.rpc<ApiResponse<Detail>>('contacts.getContact', apiRequest(site, 'getContact', { params: { id } }), { timeoutMs: 10_000 })).body.data;
  const patch = (site: Site, id: string, body: Record<string, unknown>) =>
    caller.rpc<ApiResponse<Detail>>('contacts.patchContact', apiRequest(site, 'patchContact', { params: { id }, body }), { timeoutMs: 10_000 });

  /** The contact's write-back status per target once `ready` holds for it. */
  const statusOnContact = (site: Site, id: string, ready: (byTarget: Record<string, Record<string, unknown>>) => boolean) =>
    waitFor('the write-back status on the contact', async () => {
      const byTarget = Object.fromEntries((await detail(site, id)).writeback.map((w) => [String(w['target']), w]));
      return ready(byTarget) ? byTarget : undefined;
    });

  const admin = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json', ...init.headers },
    });
    return { status: response.status, body: (response.status === 204 ? null : await response.json()) as { data: Record<string, unknown> & Record<string, unknown>[] } };
  };

  async function newSite(options: { crm?: boolean; ads?: boolean } = {}): Promise<Site> {
    const site: Site = {
      website: { id: randomUUID(), domain: `shop-${randomUUID().slice(0, 6)}.test`, timezone: 'Europe/Berlin', currency: 'EUR' },
      workspace: { id: randomUUID(), name: 'Shop', timezone: 'Europe/Berlin', currency: 'EUR', plan: 'pro' },
    };
    if (options.crm ?? true) {
      const id = ConnectionsRepo.idOf(site.website.id, crm.provider);
      await new ConnectionsRepo(crmSql).save({ id, workspaceId: site.workspace.id, websiteId: site.website.id, provider: crm.provider, sealed: box.seal(id, { api_key: 'crm-secret' }) });
    }
    if (options.ads ?? true) {
      const google = await admin(`/crm/ad-destinations/${site.website.id}/google_ads`, {
        method: 'PUT',
        body: JSON.stringify({ workspace_id: site.workspace.id, credentials: { access_token: 'google-token', developer_token: 'google-developer-token' }, settings: { customer_id: '123-456-7890', conversion_action_id: '42', api: 'google_ads_api' } }),
      });
      expect(google.status).toBe(200);
      const meta = await admin(`/crm/ad-destinations/${site.website.id}/meta_ads`, {
        method: 'PUT',
        body: JSON.stringify({ workspace_id: site.workspace.id, credentials: { access_token: 'meta-token' }, settings: { pixel_id: '555000' } }),
      });
      expect(meta.status).toBe(200);
    }
    return site;
  }

  /** Files a conversion through contacts (as ingest would) and returns its id. */
  async function newContact(site: Site, email: string, clickIds: Record<string, string>, properties: Record<string, unknown> = {}): Promise<string> {
    const id = randomUUID();
    await caller.publish({
      type: 'conversion.created', source: 'ingest', workspace_id: site.workspace.id, website_id: site.website.id,
      payload: {
        ...MESSAGE_EXAMPLES['conversion.created'], conversion_id: id, website_id: site.website.id, workspace_id: site.workspace.id, identity_id: null,
        email, occurred_at: new Date(Date.now() - 3600_000).toISOString(), revenue: null, currency: null, properties: { ...properties, click_ids: clickIds },
      },
    });
    await waitFor('the contact to be filed', () => detail(site, id).then(() => true, () => undefined));
    return id;
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-writeback-'));
    ads = await startAdPlatformsServer({ googleConversionActions: ['42'] });
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });
    const options: CrmSyncOptions = { credentialsKey: CREDENTIALS_KEY, adPlatformUrls: { google_ads: ads.url, meta_ads: ads.url } };
    proc = await startModules({ config, modules: [createContactsModule(), crmSyncModule(options)], logger: createLogger({ level: 'silent' }) });
    caller = await createBus({ namespace, journalDir: join(dataDir, 'bus'), validator: messageValidator, logger: createLogger({ level: 'silent' }) });
    crm.records.set('501', { email: 'ada@example.com', fields: {} });
    crm.records.set('502', { email: 'bob@example.com', fields: {} });
  }, 60_000);

  afterAll(async () => {
    await caller?.close();
    await proc?.stop();
    await ads?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(() => {
    crm.failures = [];
    crm.failing = null;
  });

  it('writes the outcome onto the right CRM record, uploads to Google Ads and Meta, and shows it on the contact', async () => {
    const site = await newSite();
    const id = await newContact(site, 'Bob@Example.com', { gclid: 'Cj0-bob', fbclid: 'IwAR-bob' });
    const answer = await patch(site, id, { status: 'won', sales_value: 1200, currency: 'EUR' });
    expect(answer.status).toBe(200);

    const status = await statusOnContact(site, id, (s) => ['crm', 'google_ads', 'meta_ads'].every((t) => s[t]?.['status'] === 'done'));
    expect(status['crm']).toMatchObject({ external_id: '502', attempts: 1, detail: 'written to testcrm record 502: status, sales_value, currency' });
    expect(crm.records.get('502')!.fields).toMatchObject({ status: 'won', sales_value: 1200, currency: 'EUR' });
    expect(crm.records.get('501')!.fields).toEqual({});

    expect(ads.google.accepted.find((c) => c['orderId'] === id)).toMatchObject({
      conversionAction: 'customers/1234567890/conversionActions/42', gclid: 'Cj0-bob', conversionValue: 1200, currencyCode: 'EUR',
    });
    expect(ads.meta.events.find((e) => e['event_id'] === id)).toMatchObject({
      event_name: 'Purchase', action_source: 'system_generated', custom_data: { value: 1200, currency: 'EUR' },
      user_data: { fbc: expect.stringMatching(/^fb\.1\.\d{13}\.IwAR-bob$/), em: [expect.stringMatching(/^[0-9a-f]{64}$/)] },
    });

    const shown = await detail(site, id);
    const validate = ajv.getSchema('doc#/components/schemas/ContactDetail')!;
    expect(validate(shown) ? null : validate.errors).toBeNull();
  });

  it('records "no CRM connected" as a skip, and uploads nothing without a click id', async () => {
    const site = await newSite({ crm: false });
    const id = await newContact(site, 'ada@example.com', {});
    await patch(site, id, { sales_value: 300, currency: 'EUR' });
    const status = await statusOnContact(site, id, (s) => s['crm'] !== undefined && s['google_ads'] !== undefined && s['meta_ads'] !== undefined);
    expect(status['crm']).toMatchObject({ status: 'skipped', detail: 'no CRM connected', attempts: 0 });
    expect(status['google_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no gclid') });
    expect(status['meta_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no fbclid') });
    expect(ads.google.accepted.some((c) => c['orderId'] === id)).toBe(false);
    expect(ads.meta.events.some((e) => e['event_id'] === id)).toBe(false);
  });

  it('sends a contact whose consent for ad personalisation is denied to no ad platform (ad_consent from the conversion)', async () => {
    const site = await newSite({ crm: false });
    const id = await newContact(site, 'cara@example.com', { gclid: 'Cj0-cara', fbclid: 'IwAR-cara' }, { ad_consent: 'denied' });
    await patch(site, id, { status: 'won', sales_value: 900, currency: 'EUR' });
    const status = await statusOnContact(site, id, (s) => s['google_ads'] !== undefined && s['meta_ads'] !== undefined);
    for (const target of ['google_ads', 'meta_ads']) {
      expect(status[target]).toMatchObject({ status: 'skipped', detail: 'consent for ad personalisation denied: not sent', attempts: 0 });
    }
    expect(ads.google.accepted.some((c) => c['orderId'] === id)).toBe(false);
    expect(ads.meta.events.some((e) => e['event_id'] === id)).toBe(false);
  });

  it('never writes back a change that came from the CRM, nor a value the CRM already holds (no echo loop)', async () => {
    const site = await newSite({ ads: false });
    const id = await newContact(site, 'ada@example.com', {});
    const base = { ...MESSAGE_EXAMPLES['outcome.writeback_requested'], conversion_id: id, website_id: site.website.id, workspace_id: site.workspace.id, identity_id: null, email: 'ada@example.com', click_ids: {} };
    const deliver = (payload: OutcomeWritebackRequestedV1) =>
      caller.publish({ type: 'outcome.writeback_requested', source: payload.requested_by, workspace_id: site.workspace.id, website_id: site.website.id, payload });
    const pushesBefore = crm.pushes.length;

    // A change made in the CRM (as a CRM-fed ledger update would announce it) is not written back...
    const fromCrm = randomUUID();
    await deliver({ ...base, request_id: fromCrm, requested_by: 'crm:testcrm', changes: [{ field: 'lifecycle_stage_raw', old_value: 'lead', new_value: 'opportunity' }] });
    let status = await statusOnContact(site, id, (s) => s['crm']?.['request_id'] === fromCrm);
    expect(status['crm']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('came from the CRM') });
    // ...nor is that value when it comes round again by another path (an import of a CRM export).
    const reported = randomUUID();
    await deliver({ ...base, request_id: reported, requested_by: 'import', changes: [{ field: 'lifecycle_stage_raw', old_value: 'lead', new_value: 'opportunity' }] });
    status = await statusOnContact(site, id, (s) => s['crm']?.['request_id'] === reported);
    expect(status['crm']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('already holds') });
    expect(crm.pushes.length).toBe(pushesBefore);

    // Our own write lands once...
    await patch(site, id, { lifecycle_stage_raw: 'customer' });
    status = await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'done');
    expect(crm.pushes.length).toBe(pushesBefore + 1);
    // ...and when a sync brings the value we wrote back, it is not written again.
    const echo = randomUUID();
    await deliver({ ...base, request_id: echo, requested_by: 'import', changes: [{ field: 'lifecycle_stage_raw', old_value: 'opportunity', new_value: 'customer' }] });
    status = await statusOnContact(site, id, (s) => s['crm']?.['request_id'] === echo);
    expect(status['crm']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('already holds') });
    expect(crm.pushes.length).toBe(pushesBefore + 1);

    // A real change away from what the CRM holds is written as usual.
    const change = randomUUID();
    await deliver({ ...base, request_id: change, requested_by: 'api:key2', changes: [{ field: 'lifecycle_stage_raw', old_value: 'customer', new_value: 'opportunity' }] });
    status = await statusOnContact(site, id, (s) => s['crm']?.['request_id'] === change && s['crm']?.['status'] === 'done');
    expect(crm.pushes.length).toBe(pushesBefore + 2);
  });

  it('handles a redelivered request once', async () => {
    const site = await newSite({ ads: false });
    const id = await newContact(site, 'ada@example.com', {});
    const payload: OutcomeWritebackRequestedV1 = {
      ...MESSAGE_EXAMPLES['outcome.writeback_requested'], request_id: randomUUID(), conversion_id: id, website_id: site.website.id,
      workspace_id: site.workspace.id, email: 'ada@example.com', click_ids: {}, requested_by: 'api:key1',
      changes: [{ field: 'quote_value', old_value: null, new_value: 999 }],
    };
    const envelope = { id: randomUUID(), type: 'outcome.writeback_requested', source: 'api:key1', workspace_id: site.workspace.id, website_id: site.website.id, payload };
    const before = crm.pushes.length;
    await caller.publish(envelope);
    await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'done');
    await caller.publish(envelope);
    await caller.publish({ ...envelope, id: randomUUID() });
    await new Promise((r) => setTimeout(r, 300));
    await parts.runDue();
    expect(crm.pushes.length).toBe(before + 1);
    const rows = await admin(`/crm/writebacks?conversion_id=${id}`);
    expect(rows.body.data.map((r) => r['target'])).toEqual(['crm']);
  });

  it('keeps the latest status on the contact when statuses arrive late or twice', async () => {
    const site = await newSite({ ads: false });
    const id = await newContact(site, 'ada@example.com', {});
    await patch(site, id, { notes: 'first' });
    const latest = (await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'done'))['crm']!;
    const stale = {
      ...MESSAGE_EXAMPLES['outcome.writeback_updated'], conversion_id: id, website_id: site.website.id, workspace_id: site.workspace.id,
      request_id: String(latest['request_id']), status: 'pending' as const, attempts: 0, detail: null, external_id: null,
      requested_at: String(latest['requested_at']), updated_at: new Date(Date.parse(String(latest['updated_at'])) - 1000).toISOString(),
    };
    const olderRequest = { ...stale, request_id: randomUUID(), status: 'dead' as const, requested_at: new Date(Date.parse(String(latest['requested_at'])) - 60_000).toISOString(), updated_at: new Date().toISOString() };
    // A status for another destination, sent last, tells when the stale ones were handled.
    const marker = { ...stale, target: 'google_ads' as const, status: 'skipped' as const, detail: 'marker' };
    for (const payload of [stale, olderRequest, marker]) {
      await caller.publish({ type: 'outcome.writeback_updated', source: 'crm-sync', workspace_id: site.workspace.id, website_id: site.website.id, payload });
    }
    const status = await statusOnContact(site, id, (s) => s['google_ads'] !== undefined);
    expect(status['crm']).toEqual(latest);
  });

  it('retries 429 and 5xx with exponential backoff, honouring Retry-After, then succeeds', async () => {
    const site = await newSite();
    const id = await newContact(site, 'ada@example.com', { gclid: 'Cj0-retry' });
    crm.failures = [new ProviderError('testcrm: 429 rate limited', 429, true, 120_000), new ProviderError('testcrm: 503 unavailable', 503, true)];
    ads.failNext('google_ads', googleError(429, 'RESOURCE_EXHAUSTED', { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' }, 'Too many requests.', 90));
    const start = now().getTime();
    await patch(site, id, { sales_value: 5000, currency: 'EUR' });

    let status = await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'failed' && s['google_ads']?.['status'] === 'failed');
    expect(status['crm']).toMatchObject({ attempts: 1, detail: 'testcrm: 429 rate limited' });
    const crmNext = Date.parse(String(status['crm']!['next_attempt_at'])) - start;
    expect(crmNext).toBeGreaterThanOrEqual(120_000);
    expect(crmNext).toBeLessThan(130_000);
    const googleNext = Date.parse(String(status['google_ads']!['next_attempt_at'])) - start;
    expect(googleNext).toBeGreaterThanOrEqual(90_000);
    expect(googleNext).toBeLessThan(100_000);

    // Not due yet: nothing is tried before the asked-for delay.
    advance(60_000);
    await parts.runDue();
    expect((await statusOnContact(site, id, () => true))['crm']).toMatchObject({ status: 'failed', attempts: 1 });

    advance(70_000);
    await parts.runDue();
    status = await statusOnContact(site, id, (s) => s['crm']?.['attempts'] === 2 && s['google_ads']?.['status'] === 'done');
    // Second failure: the backoff doubles (30 s base → 60 s).
    expect(status['crm']).toMatchObject({ status: 'failed', detail: 'testcrm: 503 unavailable' });
    expect(Date.parse(String(status['crm']!['next_attempt_at'])) - now().getTime()).toBeGreaterThan(55_000);

    advance(61_000);
    await parts.runDue();
    status = await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'done');
    expect(status['crm']).toMatchObject({ attempts: 3, next_attempt_at: null });
    expect(status['google_ads']).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('gives up after the last attempt (dead), lists it for operators, and an operator retry writes it', async () => {
    const site = await newSite({ ads: false });
    const id = await newContact(site, 'ada@example.com', {});
    crm.failing = new ProviderError('testcrm: 500 internal error', 500, true);
    await patch(site, id, { notes: 'called twice' });
    await statusOnContact(site, id, (s) => s['crm']?.['attempts'] === 1);
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt += 1) {
      advance(24 * 3600_000);
      await parts.runDue();
    }
    const status = await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'dead');
    expect(status['crm']).toMatchObject({ attempts: MAX_ATTEMPTS, detail: `gave up after ${MAX_ATTEMPTS} attempts: testcrm: 500 internal error`, next_attempt_at: null });

    const dead = await admin('/crm/writebacks?status=dead');
    const row = dead.body.data.find((r) => r['conversion_id'] === id)!;
    expect(row).toMatchObject({ target: 'crm', status: 'dead', attempts: MAX_ATTEMPTS, last_error: 'testcrm: 500 internal error' });
    expect((await admin(`/crm/writebacks/${String(row['id'])}`)).body.data['payload']).toMatchObject({ conversion_id: id });

    crm.failing = null;
    const retried = await admin(`/crm/writebacks/${String(row['id'])}/retry`, { method: 'POST' });
    expect(retried).toMatchObject({ status: 200, body: { data: { status: 'pending', attempts: 0 } } });
    expect((await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'done'))['crm']).toMatchObject({ attempts: 1 });
    expect((await admin(`/crm/writebacks/${String(row['id'])}/retry`, { method: 'POST' })).status).toBe(409);
  });

  it('lets a newer change take over a waiting one, so the CRM gets the newest state once', async () => {
    const site = await newSite({ ads: false });
    const id = await newContact(site, 'ada@example.com', {});
    crm.failures = [new ProviderError('testcrm: 503 unavailable', 503, true)];
    await patch(site, id, { status: 'qualified' });
    const first = await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'failed');
    const before = crm.pushes.length;

    await patch(site, id, { quote_value: 800 });
    const rows = await waitFor('the first write-back to be superseded', async () => {
      const listed = (await admin(`/crm/writebacks?conversion_id=${id}`)).body.data;
      return listed.some((r) => r['request_id'] === first['crm']!['request_id'] && r['status'] === 'skipped') ? listed : undefined;
    });
    expect(rows.find((r) => r['request_id'] === first['crm']!['request_id'])).toMatchObject({ detail: expect.stringContaining('superseded') });
    await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'done');
    expect(crm.pushes.length).toBe(before + 1);
    expect(crm.pushes.at(-1)!.request.changes.map((c) => c.field)).toEqual(['quote_value', 'status']);
    expect(crm.records.get('501')!.fields).toMatchObject({ status: 'qualified', quote_value: 800 });
  });

  it('marks a permanent error dead at once', async () => {
    const site = await newSite({ ads: false });
    const id = await newContact(site, 'nobody@example.com', {});
    await patch(site, id, { status: 'lost' });
    const status = await statusOnContact(site, id, (s) => s['crm']?.['status'] === 'dead');
    expect(status['crm']).toMatchObject({ attempts: 1, detail: 'permanent error: testcrm: no contact nobody@example.com' });
  });
});
