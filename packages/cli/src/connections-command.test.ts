// The connections command's pieces that need no running instance: the table, the credentials
// it sends, and crm-sync's options from the environment.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adConnectedMessage, adConnectionRequest, connectionsTable, credentialsOf, crmCredentials, statusLines, statusTable, type AdConnectionRow, type ConnectionRow } from './connections-command';
import { loadConfig, sectionOf } from '@sightline/kit';
import { CRM_SYNC_SETTINGS, SETTINGS_SECTIONS } from './settings';

const crmSyncOptionsFromEnv = (env: Record<string, string>) => sectionOf(loadConfig(env, SETTINGS_SECTIONS), CRM_SYNC_SETTINGS);

const row: ConnectionRow = {
  id: '3f1c9a52-5b7e-4d2a-9c1e-0a7b6c5d4e3f', website_id: '9b2f0c1d-1e2f-4a3b-8c4d-5e6f7a8b9c0d', provider: 'hubspot', status: 'active',
  health: 'failing', sync_in_progress: false, synced_through: '2026-03-05T09:00:00.000Z', last_success_at: '2026-03-05T09:02:00.000Z',
  last_error: 'HubSpot GET /crm/v3/objects/deals answered 401 INVALID_AUTHENTICATION', last_error_at: '2026-03-05T10:00:00.000Z', last_sync_records: 14,
};

const adRow: AdConnectionRow = {
  website_id: row.website_id, platform: 'linkedin_ads', workspace_id: 'ws', settings: { conversion_rule_id: '104001' }, status: 'active', updated_at: '2026-11-27T00:00:00.000Z',
  api_version: null, api_version_in_use: '202603', last_pull_at: '2026-11-27T06:00:00.000Z', last_pull_rows: 412,
  last_pull_error: 'LinkedIn 401 REVOKED_ACCESS_TOKEN', last_pull_error_at: '2026-11-27T12:00:00.000Z', next_pull_at: '2026-11-27T12:30:00.000Z',
  last_push_at: '2026-11-27T09:00:00.000Z', pushes: { done: 4, waiting: 1, dead: 1 }, next_retry_at: '2026-11-27T11:05:00.000Z',
  last_rejection: 'conversionHappenedAt is more than 90 days ago', last_rejection_at: '2026-11-27T10:00:00.000Z',
};

describe('sightline connections', () => {
  it('prints an aligned table', () => {
    const [header, line] = connectionsTable([row]).split('\n');
    expect(header).toMatch(/^ID\s+WEBSITE\s+PROVIDER\s+HEALTH\s+SYNCING\s+LAST SUCCESS\s+SYNCED THROUGH\s+RECORDS\s+LAST ERROR$/);
    expect(line).toContain('hubspot');
    expect(line).toContain('2026-03-05T09:02:00Z');
    expect(line).toContain('401 INVALID_AUTHENTICATION');
    expect(header!.indexOf('HEALTH')).toBe(line!.indexOf('failing'));
    expect(connectionsTable([])).toMatch(/no CRM connections/);
  });

  it('sends exactly one form of credentials', () => {
    expect(credentialsOf({ token: 'pat-1' })).toEqual({ access_token: 'pat-1' });
    expect(credentialsOf({ credentials: '{"access_token":"pat-2"}' })).toEqual({ access_token: 'pat-2' });
    expect(() => credentialsOf({})).toThrow(/exactly one/);
    expect(() => credentialsOf({ token: 'a', credentials: '{}' })).toThrow(/exactly one/);
    expect(() => credentialsOf({ credentials: '[1]' })).toThrow(/JSON object/);
  });

  it('builds each ad platform\'s credentials and settings from its flags', () => {
    expect(adConnectionRequest('google-ads', { token: 'ya29.a', refreshToken: '1//r', customerId: '123-456-7890', loginCustomerId: '111-222-3333', conversionActionId: '42' })).toEqual({
      platform: 'google_ads', credentials: { access_token: 'ya29.a', refresh_token: '1//r' },
      settings: { customer_id: '123-456-7890', login_customer_id: '111-222-3333', conversion_action_id: '42' }, api_version: null,
    });
    expect(adConnectionRequest('google-ads', { token: 't', developerToken: 'dev', customerId: '1', apiVersion: 'v25' })).toMatchObject({ credentials: { access_token: 't', developer_token: 'dev' }, api_version: 'v25' });
    expect(adConnectionRequest('meta-ads', { credentials: '{"access_token":"EAAB"}', adAccountId: 'act_1', pixelId: '555000' })).toEqual({
      platform: 'meta_ads', credentials: { access_token: 'EAAB' }, settings: { ad_account_id: 'act_1', pixel_id: '555000' }, api_version: null,
    });
    const tokenFile = join(mkdtempSync(join(tmpdir(), 'sightline-cli-')), 'token');
    writeFileSync(tokenFile, 'AQX-linkedin\n');
    expect(adConnectionRequest('linkedin-ads', { tokenFile, adAccountId: '5080001', conversionRuleId: ['104001', '104002'], settings: '{"send":[{"stage":"deal_won"}]}' })).toEqual({
      platform: 'linkedin_ads', credentials: { access_token: 'AQX-linkedin' },
      settings: { send: [{ stage: 'deal_won' }], ad_account_id: '5080001', conversion_rule_id: '104001', conversion_rule_ids: ['104001', '104002'] }, api_version: null,
    });
    expect(() => adConnectionRequest('google-ads', { customerId: '1' })).toThrow(/access token is missing/);
    expect(() => adConnectionRequest('google-ads', { token: 't' })).toThrow(/--customer-id is required/);
    expect(() => adConnectionRequest('meta-ads', { token: 't' })).toThrow(/--ad-account-id or --pixel-id/);
    expect(() => adConnectionRequest('linkedin-ads', { token: 't', tokenFile })).toThrow(/at most one/);
    expect(() => adConnectionRequest('linkedin-ads', { token: 't', settings: '[]' })).toThrow(/--settings must be a JSON object/);
  });

  it('lists CRM and ad connections together: last pull and push, rows, last error, next retry', () => {
    const lines = statusLines([row], [adRow, { ...adRow, platform: 'google_ads', last_pull_error: null, next_pull_at: null, last_rejection: null, pushes: { done: 1, waiting: 0, dead: 0 }, next_retry_at: null, api_version_in_use: 'v26' }]);
    expect(lines.map((l) => [l.kind, l.platform, l.health, l.next_retry_at, l.last_error])).toEqual([
      ['crm', 'hubspot', 'failing', null, 'HubSpot GET /crm/v3/objects/deals answered 401 INVALID_AUTHENTICATION'],
      ['ads', 'linkedin_ads', 'failing', '2026-11-27T11:05:00.000Z', 'pull: LinkedIn 401 REVOKED_ACCESS_TOKEN'],
      ['ads', 'google_ads', 'ok', null, null],
    ]);
    const [header, , linkedin] = statusTable(lines).split('\n');
    expect(header).toMatch(/^KIND\s+WEBSITE\s+PLATFORM\s+HEALTH\s+LAST PULL\s+ROWS\s+LAST PUSH\s+NEXT RETRY\s+API\s+LAST ERROR$/);
    expect(linkedin).toContain('412');
    expect(linkedin).toContain('2026-11-27T09:00:00Z');
    expect(linkedin).toContain('202603');
    expect(header!.indexOf('NEXT RETRY')).toBe(linkedin!.indexOf('2026-11-27T11:05:00Z'));
    expect(statusTable([])).toMatch(/no connections/);
  });

  it('shows an ad account without conversion settings as spend only, on status and after add', () => {
    expect(adConnectionRequest('google-ads', { token: 't', customerId: '123-456-7890' }).settings).toEqual({ customer_id: '123-456-7890' });
    expect(adConnectionRequest('meta-ads', { token: 't', adAccountId: 'act_1' }).settings).toEqual({ ad_account_id: 'act_1' });
    const spendOnly: AdConnectionRow = { ...adRow, platform: 'meta_ads', settings: { ad_account_id: 'act_1' }, last_pull_error: null, last_rejection: null, last_push_at: null, pushes: { done: 0, waiting: 0, dead: 0 }, next_retry_at: null, spend_only: true };
    const lines = statusLines([], [spendOnly, adRow]);
    expect(lines.map((l) => [l.platform, l.health, l.spend_only])).toEqual([['meta_ads', 'ok', true], ['linkedin_ads', 'failing', false]]);
    const [header, meta, linkedin] = statusTable(lines).split('\n');
    expect(meta!.slice(header!.indexOf('LAST PUSH')).startsWith('spend only')).toBe(true);
    expect(linkedin!.slice(header!.indexOf('LAST PUSH')).startsWith('2026-11-27T09:00:00Z')).toBe(true);
    expect(adConnectedMessage('meta-ads', 'shop.example', { status: 'active', api_version_in_use: 'v24.0', spend_only: true }))
      .toBe('meta-ads connected to shop.example (active, API version v24.0); spend only: conversions are not sent (add --pixel-id to send them); follow it with: sightline connections status --website shop.example');
    expect(adConnectedMessage('google-ads', 'shop.example', { status: 'active', api_version_in_use: 'v23', spend_only: false })).not.toContain('spend only');
  });

  it("reads crm-sync's options from its section of the one configuration, naming a bad variable", () => {
    expect(crmSyncOptionsFromEnv({})).toEqual({});
    expect(crmSyncOptionsFromEnv({
      SIGHTLINE_CREDENTIALS_KEY: 'k'.repeat(32), SIGHTLINE_HUBSPOT_URL: 'http://127.0.0.1:4010/', SIGHTLINE_CRM_SYNC_CRON: '*/5 * * * *',
      SIGHTLINE_META_ADS_URL: 'http://127.0.0.1:4011',
    })).toEqual({
      credentialsKey: 'k'.repeat(32), providerUrls: { hubspot: 'http://127.0.0.1:4010' }, syncCron: '*/5 * * * *', adPlatformUrls: { meta_ads: 'http://127.0.0.1:4011' },
    });
    expect(() => crmSyncOptionsFromEnv({ SIGHTLINE_CREDENTIALS_KEY: 'short' })).toThrow(/SIGHTLINE_CREDENTIALS_KEY/);
    expect(() => crmSyncOptionsFromEnv({ SIGHTLINE_HUBSPOT_URL: 'api.hubapi.com' })).toThrow(/SIGHTLINE_HUBSPOT_URL/);
    expect(() => crmSyncOptionsFromEnv({ SIGHTLINE_CRM_SYNC_CRON: 'hourly' })).toThrow(/SIGHTLINE_CRM_SYNC_CRON/);
  });

  it('builds each CRM\'s credentials from its flags, naming what is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sightline-sf-'));
    const pem = join(dir, 'server.key');
    writeFileSync(pem, '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n');
    expect(crmCredentials('salesforce', { clientId: '3MVG9', username: 'sync@acme.test', privateKeyFile: pem, loginUrl: 'https://test.salesforce.com' })).toEqual({
      client_id: '3MVG9', username: 'sync@acme.test', login_url: 'https://test.salesforce.com', private_key: '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n',
    });
    expect(crmCredentials('salesforce', { clientId: '3MVG9', clientSecret: 's3cr3t', refreshToken: '5Aep' })).toEqual({ client_id: '3MVG9', client_secret: 's3cr3t', refresh_token: '5Aep' });
    expect(() => crmCredentials('salesforce', { clientId: '3MVG9', privateKeyFile: pem })).toThrow(/--username/);
    expect(() => crmCredentials('salesforce', { clientId: '3MVG9', refreshToken: '5Aep' })).toThrow(/--client-secret/);
    expect(crmCredentials('salesforce', { credentials: '{"access_token":"00D!x","instance_url":"https://acme.my.salesforce.com"}' })).toEqual({ access_token: '00D!x', instance_url: 'https://acme.my.salesforce.com' });
    expect(crmCredentials('pipedrive', { token: 'pd-token' })).toEqual({ api_token: 'pd-token' });
    expect(crmCredentials('hubspot', { token: 'pat-na1' })).toEqual({ access_token: 'pat-na1' });
  });

  it('shows a paused CRM connection with its reason, resume time and API usage', () => {
    const paused: ConnectionRow = { ...row, provider: 'salesforce', paused_until: '2026-11-28T12:00:00.000Z', pause_reason: 'the org has used 7500 of its 15000 daily API calls', api_usage: { used: 7500, limit: 15000 } };
    const [line] = statusLines([paused], []);
    expect(line).toMatchObject({ health: 'paused until 2026-11-28T12:00:00Z', next_retry_at: '2026-11-28T12:00:00.000Z', api_version: '7500/15000 calls', last_error: expect.stringContaining('7500 of its 15000') });
    expect(connectionsTable([paused])).toContain('paused until 2026-11-28T12:00:00Z');
  });
});
