// The follow-up of Google Data Manager uploads (google-request-status.ts) on PGlite against the
// local stand-in: a sent row is confirmed, or marked with Google's per-event reasons, from
// requestStatus:retrieve; a partial rejection never resends what Google took; a request failed as a
// whole for a transient reason is sent again under the same transactionIds (Google keeps one copy),
// one that a resend cannot fix ends dead; PROCESSING is asked again later; rounds are bounded.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createLogger, createOutbox, createStoreProvider, runSqlMigrations, type SqlStore, type TypedEnvelope } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { Registry } from 'prom-client';
import { startDataManagerServer, type DataManagerServer } from '../../test/google-data-manager-server';
import { AD_PUSH_METRIC, bindAdMetrics } from '../ads/ad-metrics';
import { credentialsBox } from '../connections/credentials';
import { DEFAULT_RETRY_POLICY } from './backoff';
import { adDestinationKey } from './connection';
import { enqueueWriteback } from './enqueue';
import { checkRequestStatuses, REQUEST_STATUS_DEFAULTS } from './google-request-status';
import { getRow, listRows, type WritebackRow } from './store';
import { createWorker } from './worker';

const AT = new Date('2026-11-20T10:00:00.000Z');
const SETTINGS = { customer_id: '123-456-7890', conversion_action_id: '42', send: [{ outcome: 'conversion' }, { outcome: 'stage', stage: 'deal_won' }] };
const TOKEN = { access_token: 'google-token' };
const POLICY = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };

function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    request_id: randomUUID(),
    conversion_id: randomUUID(),
    email: 'ada@example.com',
    phone: null,
    click_ids: { gclid: 'Cj0-ok' },
    changes: [{ field: 'status', old_value: 'sql', new_value: 'Deal Won' }, { field: 'sales_value', old_value: null, new_value: 1200 }],
    current: { status: 'Deal Won', sales_value: 1200, quote_value: null, currency: 'EUR', lead_status_raw: null, lifecycle_stage_raw: null, is_spam: false },
    ...overrides,
  };
}

describe('Google request status follow-up (PGlite, Data Manager stand-in)', () => {
  let server: DataManagerServer;
  let provider: ReturnType<typeof createStoreProvider>;
  let sql: SqlStore;
  const logger = createLogger({ level: 'silent' });
  const box = credentialsBox('request-status-test-key');
  const registry = new Registry();
  let clock = new Date(AT);
  const now = () => new Date(clock);
  const later = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  beforeAll(async () => {
    server = await startDataManagerServer({ accounts: ['1234567890'], conversionActions: ['42'], unmatchedClickIds: ['Cj0-unknown'] });
    provider = createStoreProvider({ logger });
    sql = await provider.sql('crm_sync');
    await runSqlMigrations(sql, join(__dirname, '..', '..', 'migrations', 'postgres'));
    bindAdMetrics(registry);
  });
  afterAll(async () => {
    await provider?.close();
    await server?.close();
  });

  const outbox = () => createOutbox<'crm-sync'>(sql, { publishMany: async () => [] }, logger);
  const websiteId = randomUUID();
  const enqueue = (r: OutcomeWritebackRequestedV1) =>
    enqueueWriteback({ sql, outbox: outbox(), maxAttempts: POLICY.maxAttempts, now }, { id: randomUUID(), type: 'outcome.writeback_requested', occurred_at: clock.toISOString(), payload: r } as unknown as TypedEnvelope<'outcome.writeback_requested'>);
  const send = () =>
    createWorker({
      sql, outbox: outbox(), logger, box, now, connectorFor: () => null, policy: POLICY,
      options: { adPlatformUrls: { google_data_manager: server.url } }, leaseMs: 60_000, batchSize: 10, callTimeoutMs: 5000,
    }).runDue();
  const check = (batchSize = REQUEST_STATUS_DEFAULTS.batchSize) =>
    checkRequestStatuses({ sql, outbox: outbox(), box, logger, baseUrl: server.url, policy: POLICY, now, callTimeoutMs: 5000, ...REQUEST_STATUS_DEFAULTS, batchSize });
  const googleRow = async (conversionId: string): Promise<WritebackRow> => (await listRows(sql, { conversionId, limit: 20 })).find((r) => r.target === 'google_ads')!;
  const pushes = async (outcome: string): Promise<number> =>
    (await registry.getSingleMetric(AD_PUSH_METRIC)!.get()).values.find((v) => v.labels['platform'] === 'google_ads' && v.labels['outcome'] === outcome)?.value ?? 0;
  const ingests = () => server.requests.filter((q) => q.method === 'POST').length;
  const acceptedFor = (conversionId: string) => server.accepted.filter((a) => String(a.event['transactionId']).startsWith(conversionId)).map((a) => a.event['transactionId']).sort();

  beforeAll(async () => {
    await sql.query(
      `INSERT INTO ad_destinations (website_id, platform, workspace_id, credentials, settings, status) VALUES ($1, 'google_ads', 'w', $2, $3::jsonb, 'active')`,
      [websiteId, box.seal(adDestinationKey(websiteId, 'google_ads'), TOKEN), JSON.stringify(SETTINGS)],
    );
  });

  it('confirms a request Google took, once, and counts it', async () => {
    const r = request({ website_id: websiteId });
    expect(await enqueue(r)).toBe(1);
    await send();
    const sent = await googleRow(r.conversion_id);
    expect(sent.status).toBe('done');
    expect(await check()).toBe(1);
    const row = (await getRow(sql, sent.id))!;
    expect(row).toMatchObject({ status: 'done', last_error: null, external_id: sent.external_id });
    expect(row.detail).toBe(`${sent.detail}; confirmed by Google (request ${sent.external_id}: SUCCESS, 2 event(s))`);
    expect(await pushes('confirmed')).toBe(1);
    // Final: never asked again.
    later(REQUEST_STATUS_DEFAULTS.recheckMs * 2);
    expect(await check()).toBe(0);
  });

  it('asks again later while Google is processing, a bounded number of rows per round', async () => {
    const rs = [request({ website_id: websiteId }), request({ website_id: websiteId }), request({ website_id: websiteId })];
    for (const r of rs) await enqueue(r);
    await send();
    server.holdStatus(2);
    expect(await check(2)).toBe(2);
    const held = await Promise.all(rs.map((r) => googleRow(r.conversion_id)));
    expect(held.filter((row) => row.detail!.includes('confirmed by Google'))).toHaveLength(0);
    expect(await check(2)).toBe(1);
    expect(await check(2)).toBe(0);
    later(REQUEST_STATUS_DEFAULTS.recheckMs + 1000);
    expect(await check(2)).toBe(2);
    const rows = await Promise.all(rs.map((r) => googleRow(r.conversion_id)));
    expect(rows.every((row) => row.status === 'done' && row.detail!.includes('confirmed by Google'))).toBe(true);
    expect(await pushes('confirmed')).toBe(4);
  });

  it('records a later per-event rejection with Google\'s reason, and never resends the event Google took', async () => {
    const r = request({ website_id: websiteId });
    server.failEvent(`${r.conversion_id}:stage:deal_won`, 'PROCESSING_ERROR_REASON_EVENT_TOO_OLD');
    await enqueue(r);
    await send();
    expect(acceptedFor(r.conversion_id)).toEqual([`${r.conversion_id}:conversion`]);
    const before = ingests();
    expect(await check()).toBe(1);
    const row = await googleRow(r.conversion_id);
    expect(row.status).toBe('done');
    expect(row.last_error).toBe(`Google rejected part of request ${row.external_id} (PARTIAL_SUCCESS): PROCESSING_ERROR_REASON_EVENT_TOO_OLD: 1`);
    expect(row.detail).toContain('the events Google took stay sent and are not sent again');
    expect(await pushes('rejected')).toBe(1);
    later(3600_000);
    await send();
    expect(await enqueue({ ...r, request_id: randomUUID() })).toBe(0);
    await send();
    expect(await check()).toBe(0);
    expect(ingests()).toBe(before);
  });

  it('ends a request Google failed for a reason a resend cannot fix as dead, with that reason', async () => {
    const r = request({ website_id: websiteId, click_ids: { gclid: 'Cj0-unknown' }, email: null });
    await enqueue(r);
    await send();
    const before = ingests();
    expect(await check()).toBe(1);
    const row = await googleRow(r.conversion_id);
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    expect(row.last_error).toBe(`Google failed request ${row.external_id} as a whole (FAILED): PROCESSING_ERROR_REASON_INVALID_GCLID: 2`);
    expect(row.detail).toContain('a resend cannot fix this');
    expect(await pushes('dead')).toBe(1);
    later(24 * 3600_000);
    await send();
    expect(ingests()).toBe(before);
  });

  it('sends a request Google failed as a whole for a transient reason again, under the same transactionIds', async () => {
    const r = request({ website_id: websiteId });
    await enqueue(r);
    await send();
    const first = await googleRow(r.conversion_id);
    const duplicates = server.duplicates;
    server.failNext({
      status: 200,
      body: { requestStatusPerDestination: [{ requestStatus: 'FAILED', errorInfo: { errorCounts: [{ recordCount: '2', reason: 'PROCESSING_ERROR_REASON_INTERNAL_ERROR' }] } }] },
    });
    expect(await check()).toBe(1);
    const failed = await googleRow(r.conversion_id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 2 });
    expect(failed.last_error).toContain('sent again under the same transactionIds');
    expect(await pushes('failed')).toBe(1);
    later(3600_000);
    await send();
    const resent = await googleRow(r.conversion_id);
    expect(resent.status).toBe('done');
    expect(resent.external_id).not.toBe(first.external_id);
    // Google kept one copy of each event: the resend counted as duplicates.
    expect(acceptedFor(r.conversion_id)).toEqual([`${r.conversion_id}:conversion`, `${r.conversion_id}:stage:deal_won`]);
    expect(server.duplicates).toBe(duplicates + 2);
    expect(await check()).toBe(1);
    expect((await googleRow(r.conversion_id)).detail).toContain(`confirmed by Google (request ${resent.external_id}: SUCCESS`);
  });

  it('stops asking when Google no longer knows the request, saying it is not confirmed', async () => {
    const r = request({ website_id: websiteId });
    await enqueue(r);
    await send();
    const row = await googleRow(r.conversion_id);
    await sql.query(`UPDATE writebacks SET external_id = 'gone-request' WHERE id = $1::uuid`, [row.id]);
    expect(await check()).toBe(1);
    const after = (await getRow(sql, row.id))!;
    expect(after.status).toBe('done');
    expect(after.detail).toContain('not confirmed: Google no longer knows the request');
    expect(await check()).toBe(0);
  });
});
