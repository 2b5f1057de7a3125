// The spend-pull settings of crm-sync (SIGHTLINE_AD_SPEND_*, SIGHTLINE_LINKEDIN_ADS_URL, SIGHTLINE_GOOGLE_OAUTH_URL) as the one
// validated configuration reads them: typed options for the module, a bad value named at start.
import { loadConfig, sectionOf } from '@sightline/kit';
import { CRM_SYNC_SETTINGS, SETTINGS_SECTIONS } from './settings';

const optionsOf = (env: Record<string, string>) => sectionOf(loadConfig(env, SETTINGS_SECTIONS), CRM_SYNC_SETTINGS);

describe('crm-sync spend-pull settings', () => {
  it('maps the variables to the module options', () => {
    expect(optionsOf({
      SIGHTLINE_AD_SPEND_PULL_CRON: '*/30 * * * *', SIGHTLINE_AD_SPEND_COST_DAYS: '5', SIGHTLINE_AD_SPEND_CONVERSION_DAYS: '45',
      SIGHTLINE_LINKEDIN_ADS_URL: 'http://127.0.0.1:4012/', SIGHTLINE_GOOGLE_OAUTH_URL: 'http://127.0.0.1:4013',
    })).toEqual({ adSpendPullCron: '*/30 * * * *', adSpendCostDays: 5, adSpendConversionDays: 45, adPlatformUrls: { linkedin_ads: 'http://127.0.0.1:4012', google_oauth: 'http://127.0.0.1:4013' } });
  });

  it('maps the conversion write-back settings (Data Manager URL, lease, call timeout) to the module options', () => {
    expect(optionsOf({
      SIGHTLINE_GOOGLE_DATA_MANAGER_URL: 'http://127.0.0.1:4014/', SIGHTLINE_CRM_WRITEBACK_LEASE_MS: '8000', SIGHTLINE_CRM_WRITEBACK_CALL_TIMEOUT_MS: '4000',
    })).toEqual({ adPlatformUrls: { google_data_manager: 'http://127.0.0.1:4014' }, writebackLeaseMs: 8000, writebackCallTimeoutMs: 4000 });
    expect(() => optionsOf({ SIGHTLINE_CRM_WRITEBACK_LEASE_MS: '10' })).toThrow(/SIGHTLINE_CRM_WRITEBACK_LEASE_MS/);
    expect(() => optionsOf({ SIGHTLINE_GOOGLE_DATA_MANAGER_URL: 'datamanager.googleapis.com' })).toThrow(/SIGHTLINE_GOOGLE_DATA_MANAGER_URL/);
  });

  it('refuses a bad value naming the variable', () => {
    expect(() => optionsOf({ SIGHTLINE_AD_SPEND_PULL_CRON: 'hourly' })).toThrow(/SIGHTLINE_AD_SPEND_PULL_CRON/);
    expect(() => optionsOf({ SIGHTLINE_AD_SPEND_COST_DAYS: '0' })).toThrow(/SIGHTLINE_AD_SPEND_COST_DAYS/);
    expect(() => optionsOf({ SIGHTLINE_AD_SPEND_CONVERSION_DAYS: 'a month' })).toThrow(/SIGHTLINE_AD_SPEND_CONVERSION_DAYS/);
  });
});
