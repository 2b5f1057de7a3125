// The connections command's pieces that need no running instance: the table, the credentials
// it sends, and crm-sync's options from the environment.
import { connectionsTable, credentialsOf, type ConnectionRow } from './connections-command';
import { loadConfig, sectionOf } from '@sightline/kit';
import { CRM_SYNC_SETTINGS, SETTINGS_SECTIONS } from './settings';

const crmSyncOptionsFromEnv = (env: Record<string, string>) => sectionOf(loadConfig(env, SETTINGS_SECTIONS), CRM_SYNC_SETTINGS);

const row: ConnectionRow = {
  id: '3f1c9a52-5b7e-4d2a-9c1e-0a7b6c5d4e3f', website_id: '9b2f0c1d-1e2f-4a3b-8c4d-5e6f7a8b9c0d', provider: 'hubspot', status: 'active',
  health: 'failing', sync_in_progress: false, synced_through: '2026-03-05T09:00:00.000Z', last_success_at: '2026-03-05T09:02:00.000Z',
  last_error: 'HubSpot GET /crm/v3/objects/deals answered 401 INVALID_AUTHENTICATION', last_error_at: '2026-03-05T10:00:00.000Z', last_sync_records: 14,
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
});
