// Ad-platform connections as crm-sync serves them (the real module on embedded PGlite): LinkedIn
// joins Google Ads and Meta on the admin routes, an operator can pin an API version per account,
// each account's status (pulls, pushes, rejections, next retry) is readable, and the API-version
// table shows on /readyz and /metrics with the ad counters. Both profiles: embedded PGlite and a
// PostgreSQL server (migration 005 widens CHECK constraints, which both must accept).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createOutbox, defineStandIn, loadConfig, startModules, type RunningProcess, type SqlStore } from '@sightline/kit';
import { freshPostgresDatabase } from '@sightline/kit/testing/servers';
import { startAdPlatformsServer, type AdPlatformsServer } from '../../test/ad-platforms-server';
import { credentialsBox } from '../connections/credentials';
import { createCrmSyncModule } from '../index';
import { registerCrmSyncMetrics } from '../metrics';
import { adDestinationKey } from '../writeback/connection';
import { writebackParts, type WritebackParts } from '../writeback/writeback.parts';
import { saveAdPullStatus, saveAdPushStatus } from '../writeback/connection';
import { recordAdPull, recordAdPush } from './ad-metrics';
import { API_VERSIONS, sunsetMessage, sunsetWarnings } from '../api-versions';

type Body = Record<string, unknown> & { data: Record<string, unknown> & Record<string, unknown>[] };

describe.each(['embedded', 'postgres'] as const)('ad-platform connections (admin API, status, versions; %s)', (profile) => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
  let proc: RunningProcess;
  let sql: SqlStore;
  const website = randomUUID();
  const workspace = randomUUID();

  const admin = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: Body }> => {
    const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json', ...init.headers },
    });
    return { status: response.status, body: (response.status === 204 ? {} : await response.json()) as Body };
  };
  const put = (platform: string, body: Record<string, unknown>, site = website) =>
    admin(`/crm/ad-destinations/${site}/${platform}`, { method: 'PUT', body: JSON.stringify({ workspace_id: workspace, ...body }) });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-ad-connections-'));
    database = profile === 'postgres' ? await freshPostgresDatabase() : undefined;
    proc = await startModules({
      config: loadConfig({
        SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `adconn${profile}${Date.now()}`,
        ...(database ? { SIGHTLINE_POSTGRES_URL: database.url } : {}),
      }),
      modules: [createCrmSyncModule({ credentialsKey: 'ad-connections-test-credentials-key' })],
      logger: createLogger({ level: 'silent' }),
    });
    sql = await proc.stores.sql('crm_sync');
  }, 60_000);
  afterAll(async () => {
    await proc?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('connects LinkedIn beside Google Ads and Meta, with the developer token optional and versions from the table', async () => {
    const linkedin = await put('linkedin_ads', { credentials: { access_token: 'li-token' }, settings: { ad_account_id: '5080001', conversion_rule_id: '104001' } });
    expect(linkedin.status).toBe(200);
    expect(linkedin.body.data).toMatchObject({ platform: 'linkedin_ads', api_version: null, api_version_in_use: API_VERSIONS.linkedin_marketing.version });

    const google = await put('google_ads', { credentials: { access_token: 'g-token', refresh_token: 'g-refresh' }, settings: { customer_id: '123-456-7890', conversion_action_id: '42' } });
    expect(google.status).toBe(200);
    expect(google.body.data['api_version_in_use']).toBe(API_VERSIONS.google_ads.version);

    const meta = await put('meta_ads', { credentials: { access_token: 'm-token' }, settings: { pixel_id: '555000' }, api_version: 'v24.0' });
    expect(meta.status).toBe(200);
    expect(meta.body.data).toMatchObject({ api_version: 'v24.0', api_version_in_use: 'v24.0' });

    const { body } = await admin(`/crm/ad-destinations?website_id=${website}`);
    expect(body.data.map((d) => [d['platform'], d['api_version_in_use']])).toEqual([
      ['google_ads', API_VERSIONS.google_ads.version], ['linkedin_ads', API_VERSIONS.linkedin_marketing.version], ['meta_ads', 'v24.0'],
    ]);
    expect(body.data[0]).toMatchObject({ api: 'google_ads', api_version: null, api_version_sunset: API_VERSIONS.google_ads.sunset, last_pull_at: null, last_push_at: null, pushes: { done: 0, waiting: 0, dead: 0 }, next_retry_at: null });
    expect(body.data[2]).toMatchObject({ api: 'meta_graph', api_version_sunset: null });
    expect(JSON.stringify(body)).not.toContain('token');
  });

  it('refuses what it cannot use with a problem document: unknown platform (with the allowed set), bad version, missing rule or token', async () => {
    const tiktok = await put('tiktok_ads', { credentials: { access_token: 't' }, settings: {} });
    expect(tiktok.status).toBe(400);
    expect(tiktok.body).toMatchObject({ allowed: ['google_ads', 'meta_ads', 'linkedin_ads'] });
    expect(tiktok.body['remediation']).toEqual(expect.any(String));

    const badVersion = await put('google_ads', { credentials: { access_token: 'g' }, settings: { customer_id: '1234567890', conversion_action_id: '42' }, api_version: 'v25.0' });
    expect(badVersion.status).toBe(400);
    expect(badVersion.body['detail']).toContain('is not a google_ads version');

    const badRule = await put('linkedin_ads', { credentials: { access_token: 'li' }, settings: { ad_account_id: '5080001', conversion_rule_id: 'rule-x' } });
    expect(badRule.status).toBe(400);
    expect(badRule.body['detail']).toContain('conversion_rule_id');

    const noToken = await put('linkedin_ads', { credentials: {}, settings: { conversion_rule_id: '1' } });
    expect(noToken.status).toBe(400);
    expect(noToken.body['detail']).toContain('access_token');
  });

  it('takes an account without conversion settings as spend only, still checking every setting that is given', async () => {
    const site = randomUUID();
    const google = await put('google_ads', { credentials: { access_token: 'g' }, settings: { customer_id: '123-456-7890' } }, site);
    expect(google.status).toBe(200);
    expect(google.body.data).toMatchObject({ platform: 'google_ads', spend_only: true });
    expect((await put('meta_ads', { credentials: { access_token: 'm' }, settings: { ad_account_id: 'act_1001' } }, site)).status).toBe(200);
    expect((await put('linkedin_ads', { credentials: { access_token: 'li' }, settings: { ad_account_id: '5080001' } }, site)).status).toBe(200);
    const listed = (await admin(`/crm/ad-destinations?website_id=${site}`)).body.data;
    expect(listed.map((d) => [d['platform'], d['spend_only']])).toEqual([['google_ads', true], ['linkedin_ads', true], ['meta_ads', true]]);

    // Given conversion settings are validated as before, and so is everything else on a spend-only account.
    const badAction = await put('google_ads', { credentials: { access_token: 'g' }, settings: { customer_id: '1234567890', conversion_action_id: 'purchase' } }, site);
    expect(badAction.status).toBe(400);
    expect(badAction.body['detail']).toContain('conversion_action_id');
    const badPixel = await put('meta_ads', { credentials: { access_token: 'm' }, settings: { pixel_id: 'px' } }, site);
    expect(badPixel.status).toBe(400);
    const badCustomer = await put('google_ads', { credentials: { access_token: 'g' }, settings: { customer_id: 'abc' } }, site);
    expect(badCustomer.status).toBe(400);
    expect(badCustomer.body['detail']).toContain('customer_id');
    const badCurrency = await put('meta_ads', { credentials: { access_token: 'm' }, settings: { ad_account_id: 'act_1', currency: 'euro' } }, site);
    expect(badCurrency.status).toBe(400);
    const rulesNowhere = await put('linkedin_ads', { credentials: { access_token: 'li' }, settings: { ad_account_id: '5080001', send: [{ outcome: 'stage', stage: 'deal_won' }] } }, site);
    expect(rulesNowhere.status).toBe(400);
    expect(rulesNowhere.body['detail']).toContain('setting "send" needs "conversion_rule_id"');

    // Adding the conversion setting later makes it a full account.
    const upgraded = await put('google_ads', { credentials: { access_token: 'g' }, settings: { customer_id: '123-456-7890', conversion_action_id: '42' } }, site);
    expect(upgraded.body.data['spend_only']).toBe(false);
    expect((await admin(`/crm/ad-destinations?website_id=${site}`)).body.data[0]).toMatchObject({ platform: 'google_ads', spend_only: false });
  });

  it('reports each account\'s last pull (rows or the platform\'s reason), last push, rejections and next retry', async () => {
    const site = randomUUID();
    expect((await put('linkedin_ads', { credentials: { access_token: 'li' }, settings: { conversion_rule_id: '7' } }, site)).status).toBe(200);
    const pulledAt = new Date('2026-11-27T06:00:00Z');
    await saveAdPullStatus(sql, site, 'linkedin_ads', { at: pulledAt, rows: 412, nextPullAt: new Date('2026-11-27T12:00:00Z') });
    await saveAdPullStatus(sql, site, 'linkedin_ads', { at: new Date('2026-11-27T12:00:00Z'), error: 'LinkedIn 401 REVOKED_ACCESS_TOKEN: The token used in the request has been revoked by the user', nextPullAt: new Date('2026-11-27T12:30:00Z') });
    await saveAdPushStatus(sql, site, 'linkedin_ads', new Date('2026-11-27T08:00:00Z'));
    await saveAdPushStatus(sql, site, 'linkedin_ads', new Date('2026-11-26T08:00:00Z'));
    const queue = async (status: string, extra: { detail?: string; next?: Date; at: Date }) =>
      sql.query(
        `INSERT INTO writebacks (id, request_id, target, workspace_id, website_id, conversion_id, provider, requested_by, requested_at, payload, status, max_attempts, next_attempt_at, last_error, detail, updated_at)
         VALUES ($1, $2, 'linkedin_ads', $3, $4, $5, 'linkedin_ads', 'test', $6, '{}', $7, 5, $8, $9, $9, $6)`,
        [randomUUID(), randomUUID(), workspace, site, randomUUID(), extra.at, status, extra.next ?? null, extra.detail ?? null],
      );
    await queue('done', { at: new Date('2026-11-27T09:00:00Z') });
    await queue('dead', { at: new Date('2026-11-27T10:00:00Z'), detail: 'LinkedIn 400: conversionHappenedAt is more than 90 days ago' });
    await queue('failed', { at: new Date('2026-11-27T11:00:00Z'), detail: 'LinkedIn 503', next: new Date('2026-11-27T11:05:00Z') });

    const { body } = await admin(`/crm/ad-destinations?website_id=${site}`);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({
      platform: 'linkedin_ads',
      last_pull_at: pulledAt.toISOString(),
      last_pull_rows: 412,
      last_pull_error: 'LinkedIn 401 REVOKED_ACCESS_TOKEN: The token used in the request has been revoked by the user',
      last_pull_error_at: '2026-11-27T12:00:00.000Z',
      next_pull_at: '2026-11-27T12:30:00.000Z',
      last_push_at: '2026-11-27T09:00:00.000Z',
      pushes: { done: 1, waiting: 1, dead: 1 },
      next_retry_at: '2026-11-27T11:05:00.000Z',
      last_rejection: 'LinkedIn 400: conversionHappenedAt is more than 90 days ago',
      last_rejection_at: '2026-11-27T10:00:00.000Z',
    });

    // A rejection the platform reports after the upload was taken (Google's request status) leaves the row done but shows as the last rejection.
    await queue('done', { at: new Date('2026-11-27T10:30:00Z'), detail: 'Google rejected part of request r-1 (PARTIAL_SUCCESS): PROCESSING_ERROR_REASON_EVENT_TOO_OLD: 1' });
    expect((await admin(`/crm/ad-destinations?website_id=${site}`)).body.data[0]).toMatchObject({
      pushes: { done: 2, waiting: 1, dead: 1 },
      last_rejection: 'Google rejected part of request r-1 (PARTIAL_SUCCESS): PROCESSING_ERROR_REASON_EVENT_TOO_OLD: 1',
      last_rejection_at: '2026-11-27T10:30:00.000Z',
    });

    await saveAdPullStatus(sql, site, 'linkedin_ads', { at: new Date('2026-11-27T13:00:00Z'), rows: 3 });
    const after = (await admin(`/crm/ad-destinations?website_id=${site}`)).body.data[0]!;
    expect(after).toMatchObject({ last_pull_rows: 3, last_pull_error: null, next_pull_at: null });
  });

  it('states version sunsets on /readyz (as warnings, never a 503) and on /metrics with the ad counters', async () => {
    const readyz = await fetch(`http://127.0.0.1:${proc.adminPort}/readyz`);
    expect(readyz.status).toBe(200);
    const ready = (await readyz.json()) as { warnings: string[] };
    expect(ready.warnings).toEqual(sunsetWarnings(new Date()).map((w) => `crm-sync: ${sunsetMessage(w)}`));

    recordAdPull('linkedin_ads', 412);
    recordAdPush('linkedin_ads', 'dead');
    recordAdPush('google_ads', 'done');
    const text = await proc.metrics.metrics();
    const google = API_VERSIONS.google_ads;
    const days = Math.round((Date.parse(`${google.sunset}T00:00:00Z`) - Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`)) / 86_400_000);
    expect(text).toContain(`sightline_crm_sync_api_sunset_days{api="google_ads",version="${google.version}"} ${days}`);
    expect(text).toContain(`sightline_crm_sync_api_sunset_days{api="linkedin_marketing",version="${API_VERSIONS.linkedin_marketing.version}"}`);
    expect(text).toContain('sightline_crm_sync_ad_pull_rows_total{platform="linkedin_ads"} 412');
    expect(text).toContain('sightline_crm_sync_ad_push_total{platform="linkedin_ads",outcome="dead"} 1');
    expect(text).toContain('sightline_crm_sync_ad_push_total{platform="google_ads",outcome="done"} 1');
    expect(text).toMatch(/sightline_crm_sync_writebacks\{target="linkedin_ads",status="dead"\} \d/);
  });

  it('words a sunset warning for the log and /readyz', () => {
    expect(sunsetMessage({ api: 'meta_graph', version: 'v25.0', sunset: '2028-07-29', daysLeft: 60 })).toBe('meta_graph v25.0 reaches its sunset on 2028-07-29 (60 days left): move src/api-versions.ts to a newer version');
    expect(sunsetMessage({ api: 'google_ads', version: 'v22', sunset: '2026-10-07', daysLeft: -52 })).toMatch(/^google_ads v22 reached its sunset on 2026-10-07: requests fail/);
  });
});

describe('ad uploads through the write-back queue: counted per platform and outcome, last push on the account', () => {
  const KEY = 'ad-push-metrics-test-credentials-key';
  let dataDir: string;
  let proc: RunningProcess;
  let sql: SqlStore;
  let parts: WritebackParts;
  let meta: AdPlatformsServer;
  const website = randomUUID();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-ad-push-'));
    meta = await startAdPlatformsServer({});
    proc = await startModules({
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `adpush${Date.now()}` }),
      modules: [defineStandIn({
        name: 'crm-sync',
        needs: { postgres: { schema: 'crm_sync', migrationsDir: join(__dirname, '..', '..', 'migrations', 'postgres') } },
        async create(ctx) {
          registerCrmSyncMetrics(ctx.metrics, ctx.postgres);
          const outbox = createOutbox(ctx.postgres, ctx.bus, ctx.logger);
          parts = writebackParts({
            sql: ctx.postgres, outbox, bus: ctx.bus, logger: ctx.logger, settings: ctx.settings,
            options: { credentialsKey: KEY, adPlatformUrls: { meta_ads: meta.url } }, writeback: { runOnArrival: false, pollCron: '0 0 1 1 *' },
          });
          return { consumers: parts.consumers, async start() { outbox.start(); }, async stop() { await parts.stop(); await outbox.stop(); } };
        },
      })],
      logger: createLogger({ level: 'silent' }),
    });
    sql = await proc.stores.sql('crm_sync');
  }, 60_000);
  afterAll(async () => {
    await proc?.stop();
    await meta?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const account = async (token: string) => {
    const sealed = credentialsBox(KEY).seal(adDestinationKey(website, 'meta_ads'), { access_token: token });
    await sql.query(
      `INSERT INTO ad_destinations (website_id, platform, workspace_id, credentials, settings) VALUES ($1, 'meta_ads', 'ws', $2, '{"pixel_id":"555000"}')
       ON CONFLICT (website_id, platform) DO UPDATE SET credentials = EXCLUDED.credentials`,
      [website, sealed],
    );
  };
  const queue = async () => {
    const conversion = randomUUID();
    const body = { data: [{ event_name: 'Purchase', event_time: Math.floor(Date.now() / 1000) - 3600, action_source: 'system_generated', event_id: conversion, user_data: { fbc: `fb.1.${Date.now() - 7_200_000}.IwAR-ad-push` }, custom_data: { value: 1200, currency: 'EUR' } }] };
    await sql.query(
      `INSERT INTO writebacks (id, request_id, target, workspace_id, website_id, conversion_id, provider, requested_by, requested_at, payload, status, max_attempts, next_attempt_at)
       VALUES ($1, $2, 'meta_ads', 'ws', $3, $4, 'meta_ads', 'test', now(), $5, 'pending', 3, now() - interval '1 second')`,
      [randomUUID(), randomUUID(), website, conversion, JSON.stringify(body)],
    );
  };
  const sample = async (outcome: string): Promise<number> => {
    const line = (await proc.metrics.metrics()).split('\n').find((l) => l.startsWith(`sightline_crm_sync_ad_push_total{platform="meta_ads",outcome="${outcome}"}`));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };

  it('counts a sent upload as done and stamps the account; a refused token as dead', async () => {
    await account('meta-token');
    await queue();
    expect(await parts.runDue()).toBe(1);
    expect(meta.meta.events).toHaveLength(1);
    expect(await sample('done')).toBe(1);
    const stamped = await sql.query<{ last_push_at: Date | null }>(`SELECT last_push_at FROM ad_destinations WHERE website_id = $1 AND platform = 'meta_ads'`, [website]);
    expect(stamped.rows[0]!.last_push_at).toBeInstanceOf(Date);

    await account('revoked-token');
    await queue();
    expect(await parts.runDue()).toBe(1);
    expect(await sample('dead')).toBe(1);
    expect(await sample('done')).toBe(1);
  });
});
