// Google through the Data Manager API: the request body (stage rules, hashing, consent) as
// documented, the client against the local stand-in (errors mapped to ProviderError), and the
// queue end to end on PGlite: a deal_won stage and a conversion reach Google exactly once across a
// crash-and-retry, a consent-denied contact never leaves, a wrong token ends dead with Google's reason.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createLogger, createOutbox, createStoreProvider, runSqlMigrations, type SqlStore, type TypedEnvelope } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { dataManagerError as errorBody, errorInfo, retryInfo, startDataManagerServer, type DataManagerServer } from '../../test/google-data-manager-server';
import { sha256Hex } from '../ads/identifiers';
import { credentialsBox } from '../connections/credentials';
import { DEFAULT_RETRY_POLICY } from './backoff';
import { adDestinationKey, type AdDestinationRow } from './connection';
import { parseSendRules, plannedSends, sharedSettings, SettingsError } from './conversion';
import { enqueueWriteback } from './enqueue';
import { parseGoogleAdsSettings } from './google-ads';
import { dataManagerBody, ingestEvents, parseDataManagerSettings, retrieveRequestStatus, type IngestEventsBody } from './google-data-manager';
import { planWriteback, sentKey, type PlanFacts } from './plan';
import { claimDue, getRow, listRows } from './store';
import { createWorker } from './worker';
import { providerError } from '../../test/provider-error';

const AT = new Date('2026-11-20T10:00:00.000Z');
const RULES = [{ outcome: 'conversion' }, { outcome: 'stage', stage: 'deal_won', value: 'sales_value' }, { outcome: 'stage', stage: 'mql', value: null }];
const SETTINGS = { customer_id: '123-456-7890', conversion_action_id: '42', send: RULES, default_country: 'US' };
const TOKEN = { access_token: 'google-token' };

function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    request_id: randomUUID(),
    conversion_id: randomUUID(),
    email: 'Cloudy.SanFrancisco+shopping@gmail.com',
    phone: '(800)555-0100',
    click_ids: {},
    changes: [{ field: 'status', old_value: 'sql', new_value: 'Deal Won' }, { field: 'sales_value', old_value: null, new_value: 1200 }],
    current: { status: 'Deal Won', sales_value: 1200, quote_value: null, currency: 'EUR', lead_status_raw: null, lifecycle_stage_raw: null, is_spam: false },
    ...overrides,
  };
}

function bodyFor(r: OutcomeWritebackRequestedV1, raw: Record<string, unknown> = SETTINGS): IngestEventsBody | null {
  return dataManagerBody(r, plannedSends(r, AT, sharedSettings(raw)), parseDataManagerSettings(raw));
}

describe('Data Manager request body', () => {
  it('sends the conversion and the deal_won stage, hashed and normalised as Google documents', () => {
    const r = request();
    const body = bodyFor(r)!;
    expect(body.destinations).toEqual([{ reference: 'action-42', operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: '42' }]);
    expect(body.encoding).toBe('HEX');
    expect(body.validateOnly).toBe(false);
    const ids = [{ emailAddress: sha256Hex('cloudysanfrancisco@gmail.com') }, { phoneNumber: sha256Hex('+18005550100') }];
    expect(body.events).toEqual([
      { destinationReferences: ['action-42'], transactionId: `${r.conversion_id}:conversion`, eventTimestamp: AT.toISOString(), eventSource: 'OTHER', conversionValue: 1200, currency: 'EUR', userData: { userIdentifiers: ids } },
      { destinationReferences: ['action-42'], transactionId: `${r.conversion_id}:stage:deal_won`, eventTimestamp: AT.toISOString(), eventSource: 'OTHER', conversionValue: 1200, currency: 'EUR', userData: { userIdentifiers: ids } },
    ]);
  });

  it('uses the click id when present, a per-rule conversion action, and the consent the contact granted', () => {
    const r = request({ click_ids: { gclid: 'Cj0-click' }, ad_consent: 'granted', changes: [{ field: 'lifecycle_stage_raw', old_value: null, new_value: 'MQL' }] });
    const raw = { ...SETTINGS, login_customer_id: '111-222-3333', send: [{ outcome: 'stage', stage: 'mql', value: null, conversion_action: '77' }] };
    const body = bodyFor(r, raw)!;
    expect(body.destinations).toEqual([{ reference: 'action-77', operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, loginAccount: { accountType: 'GOOGLE_ADS', accountId: '1112223333' }, productDestinationId: '77' }]);
    expect(body.events).toHaveLength(1);
    expect(body.events[0]).toMatchObject({ transactionId: `${r.conversion_id}:stage:mql`, adIdentifiers: { gclid: 'Cj0-click' }, consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' } });
    expect(body.events[0]!.conversionValue).toBeUndefined();
  });

  it('matches nobody without a click id, email or valid phone', () => {
    expect(bodyFor(request({ email: null, phone: '12' }))).toBeNull();
  });

  it('validates the send rules with readable messages', () => {
    expect(parseSendRules(undefined)).toEqual([{ outcome: 'conversion', stage: null, value: 'sales_value', currency: null, conversion_action: null }]);
    expect(parseSendRules([{ outcome: 'stage', stage: 'Deal Won', value: 5, currency: 'USD' }])).toEqual([{ outcome: 'stage', stage: 'deal_won', value: 5, currency: 'USD', conversion_action: null }]);
    const message = (input: unknown): string => {
      try {
        parseSendRules(input);
      } catch (error) {
        if (error instanceof SettingsError) return error.message;
      }
      return 'no error';
    };
    expect(message([])).toContain('non-empty list');
    expect(message([{ outcome: 'won' }])).toBe('setting "send"[0].outcome must be "conversion" or "stage"');
    expect(message([{ outcome: 'stage' }])).toContain('"send"[0].stage is required');
    expect(message([{ outcome: 'stage', stage: 'mql', value: 'revenue' }])).toContain('"send"[0].value must be "sales_value", "quote_value"');
    expect(message([{ outcome: 'stage', stage: 'mql' }, { outcome: 'stage', stage: 'MQL' }])).toContain('repeats stage "mql"');
    expect(message([{ outcome: 'conversion', colour: 'red' }])).toContain('unknown key(s) "colour"');
    expect(message([{ outcome: 'conversion', currency: 'eur' }])).toContain('ISO 4217');
  });
});

describe('plan: stage rules, consent and superseded values', () => {
  const GOOGLE: AdDestinationRow = { platform: 'google_ads', workspace_id: 'w', settings: SETTINGS };
  const facts = (over: Partial<PlanFacts> = {}): PlanFacts => ({ crmProvider: null, crmKnown: new Map(), destinations: [GOOGLE], adSent: new Map(), ...over });
  const googleRow = (r: OutcomeWritebackRequestedV1, f = facts()) => planWriteback(r, AT, f).rows.find((row) => row.target === 'google_ads');

  it('queues the Data Manager body by default, with the outcomes it carries', () => {
    const row = googleRow(request())!;
    expect(row.status).toBe('pending');
    expect((row.payload as IngestEventsBody).events.map((e) => e.transactionId.split(':').slice(1).join(':'))).toEqual(['conversion', 'stage:deal_won']);
    expect(row.sends).toEqual([{ key: 'conversion', value: 1200, currency: 'EUR' }, { key: 'stage:deal_won', value: 1200, currency: 'EUR' }]);
  });

  it('never sends a contact whose consent for ad personalisation is denied', () => {
    expect(googleRow(request({ ad_consent: 'denied' }))).toMatchObject({ status: 'skipped', detail: 'consent for ad personalisation denied: not sent', payload: {} });
  });

  it('sends an outcome once, and refuses a changed value with the reason (no restatement in the Data Manager API)', () => {
    const sent = new Map([[sentKey('google_ads', 'conversion'), { key: 'conversion', value: 1200, currency: 'EUR' }], [sentKey('google_ads', 'stage:deal_won'), { key: 'stage:deal_won', value: 1200, currency: 'EUR' }]]);
    expect(googleRow(request(), facts({ adSent: sent }))).toMatchObject({ status: 'skipped', detail: expect.stringContaining('conversion: already uploaded to Google Ads') });
    const changed = request({ changes: [{ field: 'sales_value', old_value: 1200, new_value: 1500 }], current: { ...request().current, sales_value: 1500 } });
    expect(googleRow(changed, facts({ adSent: sent }))).toMatchObject({ status: 'skipped', detail: expect.stringContaining('value changed from 1200 to 1500 after it was sent; Google Ads cannot restate') });
    // A new stage still goes, with the note about the one already sent.
    const onlyConversion = new Map([[sentKey('google_ads', 'conversion'), { key: 'conversion', value: 1200, currency: 'EUR' }]]);
    const row = googleRow(request(), facts({ adSent: onlyConversion }))!;
    expect(row).toMatchObject({ status: 'pending', detail: 'conversion: already uploaded to Google Ads', sends: [{ key: 'stage:deal_won', value: 1200, currency: 'EUR' }] });
  });

  it('keeps the Google Ads API path only for an account that opts in', () => {
    const legacy: AdDestinationRow = { ...GOOGLE, settings: { ...SETTINGS, api: 'google_ads_api' } };
    const row = googleRow(request({ click_ids: { gclid: 'Cj0' } }), facts({ destinations: [legacy] }))!;
    expect(row.payload).toMatchObject({ partialFailure: true, conversions: [{ gclid: 'Cj0', orderId: expect.any(String) }] });
    const broken: AdDestinationRow = { ...GOOGLE, settings: { ...SETTINGS, api: 'v1' } };
    expect(googleRow(request(), facts({ destinations: [broken] }))).toMatchObject({ status: 'skipped', detail: expect.stringContaining('setting "api" must be') });
    // The Data Manager settings are refused when the account is saved (the admin route parses them).
    expect(() => parseGoogleAdsSettings({ ...SETTINGS, validate_only: 'yes' })).toThrow('setting "validate_only" must be true or false');
    expect(() => parseGoogleAdsSettings({ ...SETTINGS, default_country: 'Germany' })).toThrow('setting "default_country" must be a two-letter country code');
  });
});

describe('Data Manager client against the stand-in', () => {
  let server: DataManagerServer;
  const signal = () => AbortSignal.timeout(5000);
  beforeAll(async () => {
    server = await startDataManagerServer({ accounts: ['1234567890'], conversionActions: ['42', '77'], unmatchedClickIds: ['Cj0-unknown'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('ingests with a bearer token only, answers a request id, and Google keeps one copy per transactionId', async () => {
    const body = bodyFor(request())!;
    const first = await ingestEvents(server.url, TOKEN, body, signal(), AT);
    expect(first.externalId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.detail).toContain('sent to Google Ads 1234567890 through the Data Manager API (conversion, stage:deal_won; conversion action 42)');
    const request0 = server.requests.at(-1)!;
    expect(request0.headers.authorization).toBe('Bearer google-token');
    expect(request0.headers['developer-token']).toBeUndefined();
    const before = server.accepted.length;
    await ingestEvents(server.url, TOKEN, body, signal(), AT);
    expect(server.accepted.length).toBe(before);
    expect(server.duplicates).toBe(2);
    const status = await retrieveRequestStatus(server.url, TOKEN, first.externalId!, signal(), AT);
    expect(status).toEqual({ status: 'SUCCESS', errors: [], recordCount: 2 });
  });

  it('validates only when the account says so', async () => {
    const before = server.accepted.length;
    const result = await ingestEvents(server.url, TOKEN, { ...bodyFor(request())!, validateOnly: true }, signal(), AT);
    expect(result.detail).toContain('validated');
    expect(server.accepted.length).toBe(before);
  });

  it('reads a partial failure from the asynchronous request status', async () => {
    const result = await ingestEvents(server.url, TOKEN, bodyFor(request({ click_ids: { gclid: 'Cj0-unknown' }, email: null, phone: null }))!, signal(), AT);
    const status = await retrieveRequestStatus(server.url, TOKEN, result.externalId!, signal(), AT);
    expect(status).toEqual({ status: 'FAILED', errors: ['PROCESSING_ERROR_REASON_INVALID_GCLID: 2'], recordCount: 2 });
  });

  it('maps errors: a wrong token and a refused field are permanent with the reason, 429 and 5xx retry as asked', async () => {
    const body = bodyFor(request())!;
    const auth = await providerError(ingestEvents(server.url, { access_token: 'revoked' }, body, signal(), AT));
    expect(auth).toMatchObject({ retryable: false, status: 401 });
    expect(auth.message).toContain('401 UNAUTHENTICATED ACCESS_TOKEN_TYPE_UNSUPPORTED: Request had invalid authentication credentials');
    const denied = await providerError(ingestEvents(server.url, TOKEN, { ...body, destinations: body.destinations.map((d) => ({ ...d, operatingAccount: { ...d.operatingAccount, accountId: '999' } })) }, signal(), AT));
    expect(denied).toMatchObject({ retryable: false, status: 403 });
    expect(denied.message).toContain('PERMISSION_DENIED');
    const bad = await providerError(ingestEvents(server.url, TOKEN, { ...body, events: body.events.map((e) => ({ ...e, currency: 'euro' })) }, signal(), AT));
    expect(bad.retryable).toBe(false);
    expect(bad.message).toContain('events[0].currency: Must be an ISO 4217 code.');

    server.failNext(errorBody('RESOURCE_EXHAUSTED', 'Quota exceeded.', [errorInfo('RATE_LIMIT_EXCEEDED'), retryInfo(42)]));
    const quota = await providerError(ingestEvents(server.url, TOKEN, body, signal(), AT));
    expect(quota).toMatchObject({ retryable: true, status: 429, retryAfterMs: 42_000 });
    server.failNext(errorBody('UNAVAILABLE', 'The service is currently unavailable.'));
    expect(await providerError(ingestEvents(server.url, TOKEN, body, signal(), AT))).toMatchObject({ retryable: true, status: 503 });
    expect(await providerError(ingestEvents(server.url, {}, body, signal(), AT))).toMatchObject({ retryable: false });
  });
});

describe('the queue with Data Manager (PGlite)', () => {
  let server: DataManagerServer;
  let provider: ReturnType<typeof createStoreProvider>;
  let sql: SqlStore;
  const logger = createLogger({ level: 'silent' });
  const box = credentialsBox('data-manager-test-key');
  let clock = new Date(AT);
  const now = () => new Date(clock);

  beforeAll(async () => {
    server = await startDataManagerServer({ accounts: ['1234567890'], conversionActions: ['42'] });
    provider = createStoreProvider({ logger });
    sql = await provider.sql('crm_sync');
    await runSqlMigrations(sql, join(__dirname, '..', '..', 'migrations', 'postgres'));
  });
  afterAll(async () => {
    await provider?.close();
    await server?.close();
  });

  const outbox = () => createOutbox<'crm-sync'>(sql, { publishMany: async () => [] }, logger);
  async function site(credentials: Record<string, string>): Promise<string> {
    const websiteId = randomUUID();
    await sql.query(
      `INSERT INTO ad_destinations (website_id, platform, workspace_id, credentials, settings, status) VALUES ($1, 'google_ads', 'w', $2, $3::jsonb, 'active')`,
      [websiteId, box.seal(adDestinationKey(websiteId, 'google_ads'), credentials), JSON.stringify(SETTINGS)],
    );
    return websiteId;
  }
  const enqueue = (r: OutcomeWritebackRequestedV1) =>
    enqueueWriteback({ sql, outbox: outbox(), maxAttempts: 3, now }, { id: randomUUID(), type: 'outcome.writeback_requested', occurred_at: clock.toISOString(), payload: r } as unknown as TypedEnvelope<'outcome.writeback_requested'>);
  const worker = () =>
    createWorker({
      sql, outbox: outbox(), logger, box, now, connectorFor: () => null, policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 },
      options: { adPlatformUrls: { google_data_manager: server.url } }, leaseMs: 60_000, batchSize: 10, callTimeoutMs: 5000,
    });
  const googleRows = async (conversionId: string) => (await listRows(sql, { conversionId, limit: 20 })).filter((r) => r.target === 'google_ads');

  it('sends deal_won and the conversion exactly once across a crash after the call, then never again', async () => {
    const websiteId = await site(TOKEN);
    const r = request({ website_id: websiteId, click_ids: { gclid: 'Cj0-queue' } });
    expect(await enqueue(r)).toBe(1);
    // A worker claims the row and makes the call, then dies before recording it.
    const [claimed] = (await claimDue(sql, now(), new Date(clock.getTime() + 60_000), 10)).filter((row) => row.conversion_id === r.conversion_id);
    await ingestEvents(server.url, TOKEN, claimed!.payload as IngestEventsBody, AbortSignal.timeout(5000), now());
    expect(server.accepted.filter((a) => String(a.event['transactionId']).startsWith(r.conversion_id))).toHaveLength(2);
    // After the lease, the next worker sends it again: Google keeps one copy per transactionId.
    clock = new Date(clock.getTime() + 120_000);
    await worker().runDue();
    const row = (await getRow(sql, claimed!.id))!;
    expect(row).toMatchObject({ status: 'done', attempts: 1 });
    expect(row.detail).toContain('(conversion, stage:deal_won; conversion action 42)');
    const mine = server.accepted.filter((a) => String(a.event['transactionId']).startsWith(r.conversion_id));
    expect(mine.map((a) => a.event['transactionId']).sort()).toEqual([`${r.conversion_id}:conversion`, `${r.conversion_id}:stage:deal_won`]);
    expect(mine[0]!.event['userData']).toEqual({ userIdentifiers: [{ emailAddress: sha256Hex('cloudysanfrancisco@gmail.com') }, { phoneNumber: sha256Hex('+18005550100') }] });

    // The same stage again (another request): planned as already uploaded, nothing sent.
    expect(await enqueue({ ...r, request_id: randomUUID() })).toBe(0);
    const rows = await googleRows(r.conversion_id);
    expect(rows.map((x) => x.status).sort()).toEqual(['done', 'skipped']);
    expect(rows.find((x) => x.status === 'skipped')!.detail).toContain('already uploaded to Google Ads');
  });

  it('never sends a consent-denied contact', async () => {
    const websiteId = await site(TOKEN);
    const r = request({ website_id: websiteId, ad_consent: 'denied' });
    const requestsBefore = server.requests.length;
    expect(await enqueue(r)).toBe(0);
    await worker().runDue();
    expect(server.requests.length).toBe(requestsBefore);
    expect(await googleRows(r.conversion_id)).toMatchObject([{ status: 'skipped', detail: 'consent for ad personalisation denied: not sent' }]);
  });

  it('ends dead with Google\'s reason on a wrong credential, without retrying', async () => {
    const websiteId = await site({ access_token: 'wrong' });
    const r = request({ website_id: websiteId });
    expect(await enqueue(r)).toBe(1);
    await worker().runDue();
    const [row] = await googleRows(r.conversion_id);
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    expect(row!.detail).toContain('permanent error: Google Data Manager 401 UNAUTHENTICATED ACCESS_TOKEN_TYPE_UNSUPPORTED');
  });
});
