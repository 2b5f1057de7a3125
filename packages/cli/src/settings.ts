// Each service's settings: a section of the one validated configuration (kit loadConfig), so a bad
// value stops `sightline start` naming the variable, and the module gets typed options instead of
// reading the environment. A service with settings adds its section here and to SETTINGS_SECTIONS.
import type { ConfigSection } from '@sightline/kit';
import type { AutomationsOptions } from '@sightline/service-automations';
import type { CrmSyncOptions } from '@sightline/service-crm-sync';
import { AUTOMATIONS_LIMIT_VARIABLES, buildAutomationsLimits } from './automations-config';
import type { GatewayOptions } from '@sightline/service-gateway';

const httpUrl = { type: 'string', pattern: '^https?://[^\\s]+$' };
const trimSlash = (url: string): string => url.replace(/\/$/, '');

/** gateway; `demo` comes from SIGHTLINE_DEMO in kit's own schema (registry.ts adds it). */
export const GATEWAY_SETTINGS: ConfigSection<Omit<GatewayOptions, 'demo'>> = {
  service: 'gateway',
  variables: {
    SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND: { schema: { enum: ['true', 'false'] }, description: 'Believe identify() with the old unbound signature (an HMAC of the email alone, which any browser can replay) during a migration to the bound form. Default false.' },
  },
  build(values) {
    return values['SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND'] === 'true' ? { identifyAcceptUnbound: true } : {};
  },
};

export const CRM_SYNC_SETTINGS: ConfigSection<CrmSyncOptions> = {
  service: 'crm-sync',
  variables: {
    SIGHTLINE_CREDENTIALS_KEY: { schema: { type: 'string', minLength: 16 }, description: 'Seals stored CRM and chat credentials (AES-256-GCM), e.g. `openssl rand -hex 32`. Default: derived from the cursor secret.' },
    SIGHTLINE_CRM_SYNC_CRON: { schema: { type: 'string', pattern: '^\\S+( \\S+){4,5}$' }, description: 'When every active connection syncs: a cron expression of 5 or 6 fields. Default every 15 minutes.' },
    SIGHTLINE_HUBSPOT_URL: { schema: httpUrl, description: "HubSpot's API base URL (tests point it at a local server)." },
    SIGHTLINE_SALESFORCE_LOGIN_URL: { schema: httpUrl, description: "Salesforce's login host when a connection's credentials name none (login_url). Default https://login.salesforce.com; API calls go to the instance_url the login answers." },
    SIGHTLINE_PIPEDRIVE_URL: { schema: httpUrl, description: "Pipedrive's API base URL for API-token connections (OAuth connections use their api_domain). Default https://api.pipedrive.com." },
    SIGHTLINE_GOOGLE_ADS_URL: { schema: httpUrl, description: "Google Ads API base URL for offline conversion uploads." },
    SIGHTLINE_META_ADS_URL: { schema: httpUrl, description: "Meta's Graph API base URL for Conversions API uploads." },
    SIGHTLINE_LINKEDIN_ADS_URL: { schema: httpUrl, description: "LinkedIn's Marketing API base URL (adAnalytics, conversions)." },
    SIGHTLINE_GOOGLE_OAUTH_URL: { schema: httpUrl, description: "Google's OAuth 2.0 token endpoint base URL (access tokens minted from a Google Ads account's refresh token). Default https://oauth2.googleapis.com." },
    SIGHTLINE_GOOGLE_DATA_MANAGER_URL: { schema: httpUrl, description: "Google's Data Manager API base URL (conversions sent back to Google Ads). Default https://datamanager.googleapis.com." },
    SIGHTLINE_CRM_WRITEBACK_LEASE_MS: { schema: { type: 'integer', minimum: 1000, maximum: 3600000 }, description: 'How long a write-back worker holds a claimed row before another process may take it over (a crashed worker\'s rows come back after it). Default 300000 (5 minutes); keep it above SIGHTLINE_CRM_WRITEBACK_CALL_TIMEOUT_MS.' },
    SIGHTLINE_CRM_WRITEBACK_CALL_TIMEOUT_MS: { schema: { type: 'integer', minimum: 500, maximum: 600000 }, description: 'Deadline of one write-back call to the CRM or an ad platform. Default 30000.' },
    SIGHTLINE_AD_SPEND_PULL_CRON: { schema: { type: 'string', pattern: '^\\S+( \\S+){4,5}$' }, description: 'When ad spend is pulled from every connected ad account: a cron of 5 or 6 fields. Default hourly (minute 7).' },
    SIGHTLINE_AD_SPEND_COST_DAYS: { schema: { type: 'integer', minimum: 1, maximum: 365 }, description: 'Days of cost every spend pull re-reads (today included). Default 3; an account setting spend_cost_days overrides it.' },
    SIGHTLINE_AD_SPEND_CONVERSION_DAYS: { schema: { type: 'integer', minimum: 1, maximum: 365 }, description: 'Days re-read once a day for conversions the platforms attribute late. Default 30; an account setting spend_conversion_days overrides it.' },
  },
  build(values) {
    const options: CrmSyncOptions = {};
    const text = (name: string): string | undefined => (values[name] === undefined ? undefined : String(values[name]));
    const key = text('SIGHTLINE_CREDENTIALS_KEY');
    if (key !== undefined) options.credentialsKey = key;
    const cron = text('SIGHTLINE_CRM_SYNC_CRON');
    if (cron !== undefined) options.syncCron = cron;
    const crms: Record<string, string> = {};
    const hubspot = text('SIGHTLINE_HUBSPOT_URL');
    if (hubspot !== undefined) crms['hubspot'] = trimSlash(hubspot);
    const salesforce = text('SIGHTLINE_SALESFORCE_LOGIN_URL');
    if (salesforce !== undefined) crms['salesforce'] = trimSlash(salesforce);
    const pipedrive = text('SIGHTLINE_PIPEDRIVE_URL');
    if (pipedrive !== undefined) crms['pipedrive'] = trimSlash(pipedrive);
    if (Object.keys(crms).length > 0) options.providerUrls = crms;
    const ads: Record<string, string> = {};
    const google = text('SIGHTLINE_GOOGLE_ADS_URL');
    const meta = text('SIGHTLINE_META_ADS_URL');
    if (google !== undefined) ads['google_ads'] = trimSlash(google);
    if (meta !== undefined) ads['meta_ads'] = trimSlash(meta);
    const linkedin = text('SIGHTLINE_LINKEDIN_ADS_URL');
    if (linkedin !== undefined) ads['linkedin_ads'] = trimSlash(linkedin);
    const googleOauth = text('SIGHTLINE_GOOGLE_OAUTH_URL');
    if (googleOauth !== undefined) ads['google_oauth'] = trimSlash(googleOauth);
    const dataManager = text('SIGHTLINE_GOOGLE_DATA_MANAGER_URL');
    if (dataManager !== undefined) ads['google_data_manager'] = trimSlash(dataManager);
    if (Object.keys(ads).length > 0) options.adPlatformUrls = ads;
    const spendCron = text('SIGHTLINE_AD_SPEND_PULL_CRON');
    if (spendCron !== undefined) options.adSpendPullCron = spendCron;
    if (values['SIGHTLINE_AD_SPEND_COST_DAYS'] !== undefined) options.adSpendCostDays = Number(values['SIGHTLINE_AD_SPEND_COST_DAYS']);
    if (values['SIGHTLINE_AD_SPEND_CONVERSION_DAYS'] !== undefined) options.adSpendConversionDays = Number(values['SIGHTLINE_AD_SPEND_CONVERSION_DAYS']);
    if (values['SIGHTLINE_CRM_WRITEBACK_LEASE_MS'] !== undefined) options.writebackLeaseMs = Number(values['SIGHTLINE_CRM_WRITEBACK_LEASE_MS']);
    if (values['SIGHTLINE_CRM_WRITEBACK_CALL_TIMEOUT_MS'] !== undefined) options.writebackCallTimeoutMs = Number(values['SIGHTLINE_CRM_WRITEBACK_CALL_TIMEOUT_MS']);
    return options;
  },
};

const integer = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });

/** automations (alerts); the key that seals its Slack bot tokens is SIGHTLINE_CREDENTIALS_KEY above (registry.ts passes it). */
export const AUTOMATIONS_SETTINGS: ConfigSection<AutomationsOptions> = {
  service: 'automations',
  variables: {
    SIGHTLINE_SMTP_URL: { schema: { type: 'string', pattern: '^smtps?://[^\\s]+$' }, description: 'SMTP server alert email is sent through, e.g. smtp://user:pass@mail.example.com:587. Unset: email is kept in the local mailbox (`sightline automations mailbox`).' },
    SIGHTLINE_EMAIL_FROM: { schema: { type: 'string', minLength: 3, maxLength: 200 }, description: 'From address of alert email. Default "Sightline <alerts@localhost>".' },
    SIGHTLINE_SLACK_API_URL: { schema: httpUrl, description: "Slack's Web API base URL (tests point it at a local server). Default https://slack.com/api." },
    SIGHTLINE_LLM_URL: { schema: httpUrl, description: 'OpenAI-compatible API base URL (…/v1) that writes messages of alerts with compose.ai; needs SIGHTLINE_LLM_MODEL.' },
    SIGHTLINE_LLM_MODEL: { schema: { type: 'string', minLength: 1, maxLength: 200 }, description: 'Model name sent to SIGHTLINE_LLM_URL.' },
    SIGHTLINE_LLM_API_KEY: { schema: { type: 'string', minLength: 1 }, description: 'Bearer key for SIGHTLINE_LLM_URL, when it needs one.' },
    SIGHTLINE_AUTOMATIONS_TICK_CRON: { schema: { type: 'string', pattern: '^\\S+( \\S+){4,5}$' }, description: 'When schedule and threshold alerts are evaluated: a cron of 5 or 6 fields. Default every minute.' },
    SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS: { schema: integer(2_000, 3_600_000), description: 'How long a delivery stays reserved for the worker sending it (a crashed worker\'s deliveries are taken over after it). Default 60000; at least twice the call timeout.' },
    SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS: { schema: integer(500, 120_000), description: 'Deadline of one call to SMTP, Slack or the model. Default 20000.' },
    SIGHTLINE_AUTOMATIONS_RETRY_BASE_MS: { schema: integer(100, 3_600_000), description: 'First retry delay of a failed delivery, doubled per attempt (a Retry-After overrides it). Default 30000.' },
    ...AUTOMATIONS_LIMIT_VARIABLES,
  },
  build(values) {
    const options: AutomationsOptions = {};
    const text = (name: string): string | undefined => (values[name] === undefined ? undefined : String(values[name]));
    const smtp = text('SIGHTLINE_SMTP_URL');
    if (smtp !== undefined) options.smtpUrl = smtp;
    const from = text('SIGHTLINE_EMAIL_FROM');
    if (from !== undefined) options.emailFrom = from;
    const slack = text('SIGHTLINE_SLACK_API_URL');
    if (slack !== undefined) options.slackApiUrl = trimSlash(slack);
    const llmUrl = text('SIGHTLINE_LLM_URL');
    const model = text('SIGHTLINE_LLM_MODEL');
    if ((llmUrl === undefined) !== (model === undefined)) throw new Error('SIGHTLINE_LLM_URL and SIGHTLINE_LLM_MODEL: set both (an OpenAI-compatible base URL and a model name), or neither');
    const apiKey = text('SIGHTLINE_LLM_API_KEY');
    if (llmUrl !== undefined && model !== undefined) options.llm = { url: trimSlash(llmUrl), model, ...(apiKey !== undefined ? { apiKey } : {}) };
    const tick = text('SIGHTLINE_AUTOMATIONS_TICK_CRON');
    if (tick !== undefined) options.tickCron = tick;
    const lease = values['SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS'];
    const timeout = values['SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS'];
    if (lease !== undefined) options.deliveryLeaseMs = Number(lease);
    if (timeout !== undefined) options.callTimeoutMs = Number(timeout);
    if ((options.deliveryLeaseMs ?? 60_000) < 2 * (options.callTimeoutMs ?? 20_000)) {
      throw new Error('SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS: must be at least twice SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS (default 20000)');
    }
    const base = values['SIGHTLINE_AUTOMATIONS_RETRY_BASE_MS'];
    if (base !== undefined) options.retry = { baseDelayMs: Number(base) };
    buildAutomationsLimits(values, options);
    return options;
  },
};

/** Every section, in registry order; `sightline start` validates them all whatever the target. */
export const SETTINGS_SECTIONS: readonly ConfigSection[] = [GATEWAY_SETTINGS, CRM_SYNC_SETTINGS, AUTOMATIONS_SETTINGS];
