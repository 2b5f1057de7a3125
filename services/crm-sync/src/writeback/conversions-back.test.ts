// Stage outcomes back to Meta (Conversions API) and LinkedIn (Conversions API), worker level: real
// PGlite, the in-process bus, crm-sync's write-back part as index.ts wires it, and the two platforms
// as local stand-ins answering as documented. The worker's clock is the test's, so backoff and
// leases are stepped over instead of waited for. A "restart" is a second write-back part on the
// same database, as a new crm-sync process after a kill -9 would be.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus, createLogger, createOutbox, defineStandIn, loadConfig, startModules, type Bus, type ModuleContext, type RunningProcess, type SqlStore } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type AdClicksRequest, type AdClicksResponse, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { startAdPlatformsServer, type AdPlatformsServer } from '../../test/ad-platforms-server';
import { linkedinError, startLinkedinConversionsServer, type LinkedinConversionsServer } from '../../test/linkedin-conversions-server';
import { credentialsBox } from '../connections/credentials';
import type { CrmSyncOptions } from '../deps';
import { adDestinationKey, type AdPlatform } from './connection';
import { API_VERSIONS } from '../api-versions';
import { enqueueWriteback } from './enqueue';
import { claimDue } from './store';
import { writebackParts, type WritebackParts } from './writeback.parts';

const CREDENTIALS_KEY = 'conversions-back-test-key';
const MAX_ATTEMPTS = 4;
const EMAIL = '  Ada.Lovelace@Example.COM ';
const EMAIL_SHA256 = createHash('sha256').update('ada.lovelace@example.com').digest('hex');
const DEAL_WON = [{ outcome: 'stage', stage: 'deal_won', value: 'sales_value' }];

interface Row {
  target: string;
  status: string;
  attempts: number;
  detail: string | null;
  last_error: string | null;
  next_attempt_at: Date | null;
}

describe('stage outcomes back to Meta and LinkedIn (worker, PGlite, stand-ins)', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let caller: Bus;
  let meta: AdPlatformsServer;
  let linkedin: LinkedinConversionsServer;
  let sql: SqlStore;
  let ctx: ModuleContext<'crm-sync', { postgres: { schema: string; migrationsDir: string } }>;
  let parts: WritebackParts;
  let skewMs = 0;
  const box = credentialsBox(CREDENTIALS_KEY);
  const namespace = `convback${Date.now()}`;
  const now = () => new Date(Date.now() + skewMs);
  const advance = (ms: number) => {
    skewMs += ms;
  };
  let options: CrmSyncOptions;
  const extraParts: WritebackParts[] = [];

  /** A write-back part on the module's database: what a (re)started crm-sync process runs. */
  const newParts = (callTimeoutMs = 5_000) =>
    writebackParts({
      sql, outbox: createOutbox(sql, ctx.bus, ctx.logger), bus: ctx.bus, logger: ctx.logger, settings: ctx.settings, options,
      writeback: { now, policy: { maxAttempts: MAX_ATTEMPTS, baseDelayMs: 30_000 }, callTimeoutMs, runOnArrival: true },
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

  const rows = async (conversionId: string): Promise<Record<string, Row>> => {
    const result = await sql.query<Row>(
      `SELECT target, status, attempts, detail, last_error, next_attempt_at FROM writebacks WHERE conversion_id = $1::uuid AND target <> 'crm' ORDER BY requested_at`,
      [conversionId],
    );
    return Object.fromEntries(result.rows.map((r) => [r.target, r]));
  };
  const rowsWhen = (conversionId: string, ready: (r: Record<string, Row>) => boolean, timeoutMs?: number) =>
    waitFor('the write-back rows', async () => {
      const r = await rows(conversionId);
      return ready(r) ? r : undefined;
    }, timeoutMs);

  async function connect(websiteId: string, platform: AdPlatform, credentials: Record<string, string>, settings: Record<string, unknown>): Promise<void> {
    await sql.query(
      `INSERT INTO ad_destinations (website_id, platform, workspace_id, credentials, settings, status, created_at, updated_at)
       VALUES ($1, $2, 'ws1', $3, $4::jsonb, 'active', now(), now())`,
      [websiteId, platform, box.seal(adDestinationKey(websiteId, platform), credentials), JSON.stringify(settings)],
    );
  }

  /** A website with Meta and LinkedIn accounts sending the deal_won stage. */
  async function site(tokens: { meta?: string; linkedin?: string } = {}): Promise<string> {
    const websiteId = randomUUID();
    await connect(websiteId, 'meta_ads', { access_token: tokens.meta ?? 'meta-token' }, { pixel_id: '555000', send: DEAL_WON });
    await connect(websiteId, 'linkedin_ads', { access_token: tokens.linkedin ?? 'linkedin-token' }, { conversion_rule_id: '104012', send: DEAL_WON });
    return websiteId;
  }

  function dealWon(websiteId: string, overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
    return {
      ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
      request_id: randomUUID(), conversion_id: randomUUID(), website_id: websiteId, workspace_id: 'ws1', email: EMAIL, phone: null, ad_consent: null,
      click_ids: { fbclid: 'IwAR-ada', li_fat_id: 'df5gf5-gh6t7-ph4j7h-fgf6n1' }, requested_by: 'crm:hubspot',
      changes: [{ field: 'lifecycle_stage_raw', old_value: 'opportunity', new_value: 'Deal Won' }],
      current: { status: 'won', sales_value: 4200, quote_value: null, currency: 'EUR', lead_status_raw: null, lifecycle_stage_raw: 'Deal Won', is_spam: false },
      ...overrides,
    };
  }
  const deliver = (payload: OutcomeWritebackRequestedV1, id: string = randomUUID()) =>
    caller.publish({ id, type: 'outcome.writeback_requested', source: payload.requested_by, workspace_id: payload.workspace_id, website_id: payload.website_id, payload, occurred_at: now().toISOString() });

  const linkedinEvents = (conversionId: string) => linkedin.events.filter((e) => String(e['eventId']).startsWith(conversionId));
  const linkedinPosts = (conversionId: string) => linkedin.requests.filter((r) => JSON.stringify(r.body).includes(conversionId));
  const metaEvents = (conversionId: string) => meta.meta.events.filter((e) => String(e['event_id']).startsWith(conversionId));
  const metaPosts = (conversionId: string) => meta.meta.requests.filter((r) => JSON.stringify(r.body).includes(conversionId));

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-convback-'));
    meta = await startAdPlatformsServer({ metaAccessToken: 'meta-token', now });
    linkedin = await startLinkedinConversionsServer({ accessToken: 'linkedin-token', revokedTokens: ['revoked-token'], conversionRules: ['104012'], now });
    options = { credentialsKey: CREDENTIALS_KEY, adPlatformUrls: { meta_ads: meta.url, linkedin_ads: linkedin.url } };
    const module = defineStandIn({
      name: 'crm-sync',
      needs: { postgres: { schema: 'crm_sync', migrationsDir: join(__dirname, '..', '..', 'migrations', 'postgres') } },
      async create(c) {
        ctx = c as typeof ctx;
        sql = c.postgres;
        const outbox = createOutbox(sql, c.bus, c.logger);
        parts = newParts();
        return {
          consumers: parts.consumers,
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
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });
    proc = await startModules({ config, modules: [module], logger: createLogger({ level: 'silent' }) });
    caller = await createBus({ namespace, journalDir: join(dataDir, 'bus'), validator: (await import('@sightline/proto-schemas')).messageValidator, logger: createLogger({ level: 'silent' }) });
  }, 60_000);

  afterAll(async () => {
    for (const p of extraParts) await p.stop();
    await caller?.close();
    await proc?.stop();
    await meta?.close();
    await linkedin?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends a deal_won stage to Meta and LinkedIn once across a retry, a redelivery and the stage coming again, hashed as documented', async () => {
    const websiteId = await site();
    const request = dealWon(websiteId);
    const id = request.conversion_id;
    linkedin.failNext(linkedinError(503, 'Service Unavailable'));
    meta.failNext('meta_ads', { status: 500, body: { error: { message: 'An unknown error occurred', type: 'OAuthException', code: 1, is_transient: true, fbtrace_id: 'AbCdEf' } } });
    const envelopeId = randomUUID();
    await deliver(request, envelopeId);

    let r = await rowsWhen(id, (x) => x['meta_ads']?.status === 'failed' && x['linkedin_ads']?.status === 'failed');
    expect(r['linkedin_ads']).toMatchObject({ attempts: 1, last_error: 'LinkedIn 503: Service Unavailable' });
    expect(r['meta_ads']!.last_error).toContain('fbtrace_id AbCdEf');
    advance(31_000);
    await parts.runDue();
    r = await rowsWhen(id, (x) => x['meta_ads']?.status === 'done' && x['linkedin_ads']?.status === 'done');
    expect(r['linkedin_ads']).toMatchObject({ attempts: 2, detail: expect.stringContaining('sent to LinkedIn conversion rule 104012') });

    // The same request again (a redelivery) and the stage reached again later: nothing more leaves.
    await deliver(request, envelopeId);
    await deliver({ ...request, request_id: randomUUID() });
    await waitFor('the second request to be planned', async () => ((await sql.query(`SELECT 1 FROM writebacks WHERE conversion_id = $1::uuid AND target = 'linkedin_ads' AND status = 'skipped'`, [id])).rows.length > 0 ? true : undefined));
    advance(24 * 3600_000);
    await parts.runDue();

    expect(linkedinEvents(id)).toHaveLength(1);
    expect(linkedinPosts(id).map((p) => p.status)).toEqual([503, 201]);
    const sent = linkedinEvents(id)[0]!;
    expect(sent).toEqual({
      conversion: 'urn:lla:llaPartnerConversion:104012',
      conversionHappenedAt: expect.any(Number),
      conversionValue: { currencyCode: 'EUR', amount: '4200' },
      eventId: `${id}:stage:deal_won`,
      user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: EMAIL_SHA256 }, { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'df5gf5-gh6t7-ph4j7h-fgf6n1' }] },
    });
    expect(linkedinPosts(id).at(-1)!.headers).toMatchObject({ authorization: 'Bearer linkedin-token', 'x-restli-protocol-version': '2.0.0', 'linkedin-version': expect.stringMatching(/^\d{6}$/) });

    expect(metaEvents(id)).toHaveLength(1);
    expect(metaPosts(id)).toHaveLength(2);
    expect(metaEvents(id)[0]).toMatchObject({
      event_id: `${id}:stage:deal_won`, action_source: 'system_generated', event_name: 'Purchase', custom_data: { value: 4200, currency: 'EUR' },
      user_data: { em: [EMAIL_SHA256], fbc: expect.stringMatching(/^fb\.1\.\d{13}\.IwAR-ada$/) },
    });
    // The plain email never left.
    for (const post of [...linkedinPosts(id), ...metaPosts(id)]) expect(JSON.stringify(post.body).toLowerCase()).not.toContain('ada.lovelace');
  });

  it('counts an upload once when crm-sync dies after sending and before recording it (a restarted worker resends the same event id)', async () => {
    const websiteId = await site();
    const request = dealWon(websiteId);
    const id = request.conversion_id;
    // Queued by the consumer's code (not through the bus, so no live worker picks it up first).
    const envelope = { id: randomUUID(), type: 'outcome.writeback_requested', source: request.requested_by, workspace_id: 'ws1', website_id: websiteId, occurred_at: now().toISOString(), payload: request };
    await enqueueWriteback({ sql, outbox: createOutbox(sql, ctx.bus, ctx.logger), maxAttempts: MAX_ATTEMPTS, now }, envelope as unknown as Parameters<typeof enqueueWriteback>[1]);
    const queued = await rows(id);
    expect([queued['linkedin_ads']?.status, queued['meta_ads']?.status]).toEqual(['pending', 'pending']);

    // The dying process claimed the rows (a 5-minute lease) and its requests reached the platforms...
    const claimed = await claimDue(sql, now(), new Date(now().getTime() + 5 * 60_000), 50);
    const mine = claimed.filter((c) => c.conversion_id === id);
    expect(mine).toHaveLength(2);
    for (const row of mine) {
      const body = row.payload as Record<string, unknown>;
      if (row.target === 'linkedin_ads') {
        const event = (body['elements'] as unknown[])[0];
        await fetch(`${linkedin.url}/rest/conversionEvents`, { method: 'POST', headers: { authorization: 'Bearer linkedin-token', 'linkedin-version': API_VERSIONS.linkedin_marketing.version, 'x-restli-protocol-version': '2.0.0', 'content-type': 'application/json' }, body: JSON.stringify(event) });
      } else {
        await fetch(`${meta.url}/${API_VERSIONS.meta_graph.version}/555000/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, access_token: 'meta-token' }) });
      }
    }
    // ...and it was killed before recording anything. The restarted process finds the rows once the lease is over.
    const restarted = newParts();
    extraParts.push(restarted);
    await restarted.runDue();
    expect((await rows(id))['linkedin_ads']!.status).toBe('pending');
    advance(5 * 60_000 + 1000);
    await restarted.runDue();
    const r = await rowsWhen(id, (x) => x['linkedin_ads']?.status === 'done' && x['meta_ads']?.status === 'done');
    expect(r['linkedin_ads']!.attempts).toBe(1);
    expect(linkedinPosts(id)).toHaveLength(2);
    expect(linkedinEvents(id)).toHaveLength(1);
    expect(metaPosts(id)).toHaveLength(2);
    expect(metaEvents(id)).toHaveLength(1);
  });

  it('sends a CRM deal milestone (no field changed) valued at the deal amount, once across a redelivery, with no CRM row', async () => {
    const websiteId = await site();
    const request = dealWon(websiteId, {
      changes: [], current: { ...dealWon(websiteId).current, status: null, sales_value: null },
      milestone: { milestone_id: 'hubspot:deal:77:deal_won', stage: 'deal_won', deal_id: 'deal-77', amount: 9000, currency: 'USD' },
    });
    const id = request.conversion_id;
    const envelopeId = randomUUID();
    await deliver(request, envelopeId);
    await rowsWhen(id, (x) => x['meta_ads']?.status === 'done' && x['linkedin_ads']?.status === 'done');
    // contacts derives the request id from (milestone, conversion): a redelivered milestone is the same request.
    await deliver(request, randomUUID());
    await deliver(request, envelopeId);
    await new Promise((r) => setTimeout(r, 300));
    await parts.runDue();
    const all = await sql.query<{ target: string }>('SELECT target FROM writebacks WHERE conversion_id = $1::uuid', [id]);
    expect(all.rows.map((r) => r.target).sort()).toEqual(['linkedin_ads', 'meta_ads']);
    expect(linkedinEvents(id)).toHaveLength(1);
    expect(linkedinEvents(id)[0]).toMatchObject({ eventId: `${id}:stage:deal_won`, conversionValue: { currencyCode: 'USD', amount: '9000' } });
    expect(metaEvents(id)).toHaveLength(1);
    expect(metaEvents(id)[0]).toMatchObject({ event_id: `${id}:stage:deal_won`, custom_data: { value: 9000, currency: 'USD' }, user_data: { em: [EMAIL_SHA256] } });
  });

  it('calls the version an operator pinned on the account (ad_destinations.api_version) instead of the table\'s', async () => {
    const websiteId = await site();
    await sql.query(`UPDATE ad_destinations SET api_version = CASE platform WHEN 'linkedin_ads' THEN '202611' ELSE 'v26.0' END WHERE website_id = $1`, [websiteId]);
    const request = dealWon(websiteId);
    await deliver(request);
    await rowsWhen(request.conversion_id, (x) => x['meta_ads']?.status === 'done' && x['linkedin_ads']?.status === 'done');
    expect(linkedinPosts(request.conversion_id)[0]!.headers['linkedin-version']).toBe('202611');
    expect(metaPosts(request.conversion_id)[0]!.path).toBe('/v26.0/555000/events');
  });

  it('sends nothing to any platform for a contact who denied consent', async () => {
    const websiteId = await site();
    const request = dealWon(websiteId, { ad_consent: 'denied' });
    await deliver(request);
    const r = await rowsWhen(request.conversion_id, (x) => x['meta_ads'] !== undefined && x['linkedin_ads'] !== undefined);
    for (const target of ['meta_ads', 'linkedin_ads']) expect(r[target]).toMatchObject({ status: 'skipped', attempts: 0, detail: expect.stringContaining('consent') });
    await parts.runDue();
    expect(linkedinPosts(request.conversion_id)).toHaveLength(0);
    expect(metaPosts(request.conversion_id)).toHaveLength(0);
  });

  it('ends a revoked token in a readable dead status with the platform\'s reason, without retrying', async () => {
    const websiteId = await site({ meta: 'expired-meta-token', linkedin: 'revoked-token' });
    const request = dealWon(websiteId);
    await deliver(request);
    const r = await rowsWhen(request.conversion_id, (x) => x['meta_ads']?.status === 'dead' && x['linkedin_ads']?.status === 'dead');
    expect(r['linkedin_ads']).toMatchObject({
      attempts: 1,
      detail: 'permanent error: LinkedIn 401 (REVOKED_ACCESS_TOKEN, serviceErrorCode 65601): The token used in the request has been revoked by the user',
      next_attempt_at: null,
    });
    expect(r['meta_ads']!.detail).toMatch(/^permanent error: Meta 400 code 190: Invalid OAuth access token.*\(fbtrace_id \S+\)$/);
  });

  it('rides out a LinkedIn 5xx storm with growing backoff, keeps the outcome (dead, retryable by an operator), and sends it once after', async () => {
    const websiteId = randomUUID();
    await connect(websiteId, 'linkedin_ads', { access_token: 'linkedin-token' }, { conversion_rule_id: '104012', send: DEAL_WON });
    linkedin.failNext(...Array.from({ length: MAX_ATTEMPTS }, (_, i) => linkedinError(i % 2 === 0 ? 503 : 500, i % 2 === 0 ? 'Service Unavailable' : 'Internal Server Error')));
    const request = dealWon(websiteId);
    const id = request.conversion_id;
    await deliver(request);
    const delays: number[] = [];
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) {
      const r = await rowsWhen(id, (x) => x['linkedin_ads']?.attempts === attempt);
      expect(r['linkedin_ads']!.status).toBe('failed');
      const delay = r['linkedin_ads']!.next_attempt_at!.getTime() - now().getTime();
      delays.push(delay);
      advance(delay + 1000);
      await parts.runDue();
    }
    const dead = await rowsWhen(id, (x) => x['linkedin_ads']?.status === 'dead');
    expect(dead['linkedin_ads']).toMatchObject({ attempts: MAX_ATTEMPTS, detail: `gave up after ${MAX_ATTEMPTS} attempts: LinkedIn 500: Internal Server Error` });
    // Exponential: 30 s, 60 s, 120 s (the clock moved by the test, so each within a second).
    expect(delays.map((d) => Math.round(d / 1000))).toEqual([30, 60, 120]);
    expect(linkedinEvents(id)).toHaveLength(0);

    // The outcome is still there: an operator retry (the admin route's requeue) sends it, once.
    await sql.query(`UPDATE writebacks SET status = 'pending', attempts = 0, next_attempt_at = $2, detail = 'retry requested by an operator' WHERE conversion_id = $1::uuid AND target = 'linkedin_ads'`, [id, now()]);
    await parts.runDue();
    await rowsWhen(id, (x) => x['linkedin_ads']?.status === 'done');
    expect(linkedinEvents(id)).toHaveLength(1);
    expect(linkedinPosts(id)).toHaveLength(MAX_ATTEMPTS + 1);
  });

  it('skips a Meta upload that waited past 7 days, with the reason, instead of sending what Meta refuses', async () => {
    const websiteId = randomUUID();
    await connect(websiteId, 'meta_ads', { access_token: 'meta-token' }, { pixel_id: '555000', send: DEAL_WON });
    meta.failNext('meta_ads', { status: 503, body: { error: { message: 'Service temporarily unavailable', type: 'OAuthException', code: 2, is_transient: true, fbtrace_id: 'Xy' } } });
    const request = dealWon(websiteId);
    await deliver(request);
    await rowsWhen(request.conversion_id, (x) => x['meta_ads']?.status === 'failed');
    advance(8 * 24 * 3600_000);
    await parts.runDue();
    const r = await rowsWhen(request.conversion_id, (x) => x['meta_ads']?.status === 'skipped');
    expect(r['meta_ads']!.detail).toMatch(/^not sent: the conversion happened .*more than 7 days ago/);
    expect(metaPosts(request.conversion_id)).toHaveLength(1);
  });

  it('skips a LinkedIn upload that waited past 90 days, with the reason, instead of sending what LinkedIn refuses', async () => {
    const websiteId = randomUUID();
    await connect(websiteId, 'linkedin_ads', { access_token: 'linkedin-token' }, { conversion_rule_id: '104012', send: DEAL_WON });
    linkedin.failNext(linkedinError(503, 'Service Unavailable'));
    const request = dealWon(websiteId);
    await deliver(request);
    await rowsWhen(request.conversion_id, (x) => x['linkedin_ads']?.status === 'failed');
    advance(91 * 24 * 3600_000);
    await parts.runDue();
    const r = await rowsWhen(request.conversion_id, (x) => x['linkedin_ads']?.status === 'skipped');
    expect(r['linkedin_ads']!.detail).toMatch(/^not sent: the conversion happened .*more than 90 days ago/);
    expect(linkedinPosts(request.conversion_id)).toHaveLength(1);
  });

  it('fills in the click ids of the person\'s earlier visits from attribution (fbc dated by the click), waiting while attribution is away', async () => {
    const websiteId = await site();
    const clickedAt = new Date(now().getTime() - 12 * 24 * 3600_000).toISOString();
    const asked: AdClicksRequest[] = [];
    const request = dealWon(websiteId, { click_ids: {}, identity_id: 'person-ada' });
    const id = request.conversion_id;
    // Nobody serves attribution yet: the request waits (no row, no attempt spent) instead of going out
    // without clicks, longer than the bus's five quick retries would take to dead-letter it (2 s).
    await deliver(request);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await rows(id)).toEqual({});

    await caller.serveRpc({
      service: 'attribution',
      methods: {
        'attribution.getAdClicks': async (raw): Promise<AdClicksResponse> => {
          const ask = raw as AdClicksRequest;
          asked.push(ask);
          return ask.identity_id === 'person-ada'
            ? { clicks: [{ name: 'li_fat_id', value: 'li-earlier', occurred_at: clickedAt }, { name: 'fbclid', value: 'IwAR-earlier', occurred_at: clickedAt }, { name: 'gclid', value: 'g-unused', occurred_at: clickedAt }] }
            : { clicks: [] };
        },
      },
    });
    await rowsWhen(id, (x) => x['meta_ads']?.status === 'done' && x['linkedin_ads']?.status === 'done', 20_000);
    const mine = asked.filter((a) => a.identity_id === 'person-ada');
    expect(mine.length).toBeGreaterThanOrEqual(1);
    const window = Date.parse(mine[0]!.until) - Date.parse(mine[0]!.since);
    expect(window).toBe(90 * 24 * 3600_000);
    expect(mine[0]).toMatchObject({ workspace_id: 'ws1', website_id: websiteId });
    expect(metaEvents(id)[0]).toMatchObject({ user_data: { fbc: `fb.1.${Date.parse(clickedAt)}.IwAR-earlier` } });
    expect(linkedinEvents(id)[0]).toMatchObject({ user: { userIds: [{ idType: 'SHA256_EMAIL' }, { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'li-earlier' }] } });

    // The conversion's own click ids win, and with every platform's id present attribution is not asked.
    const own = dealWon(websiteId, { identity_id: 'person-ada' });
    const before = asked.length;
    await deliver(own);
    await rowsWhen(own.conversion_id, (x) => x['meta_ads']?.status === 'done' && x['linkedin_ads']?.status === 'done');
    expect(metaEvents(own.conversion_id)[0]).toMatchObject({ user_data: { fbc: expect.stringMatching(/^fb\.1\.\d{13}\.IwAR-ada$/) } });
    // Consent denied, or nothing the rules send (a plain note change): not asked either.
    const denied = dealWon(websiteId, { click_ids: {}, identity_id: 'person-ada', ad_consent: 'denied' });
    await deliver(denied);
    await rowsWhen(denied.conversion_id, (x) => x['meta_ads']?.status === 'skipped' && x['linkedin_ads']?.status === 'skipped');
    const note = dealWon(websiteId, { click_ids: {}, identity_id: 'person-ada', changes: [{ field: 'notes', old_value: null, new_value: 'called' }], current: { ...request.current, lifecycle_stage_raw: 'opportunity', status: null } });
    await deliver(note);
    await waitFor('the note request recorded', async () => ((await sql.query('SELECT 1 FROM writebacks WHERE request_id = $1::uuid', [note.request_id])).rows.length > 0 ? true : undefined));
    expect(asked.length).toBe(before);
  });
});
