// The provider APIs crm-sync calls (ad platforms and CRMs), as data: which version each connector
// uses by default and the day the provider stops answering it. A connector asks apiVersion(api,
// override) for the version to put in its URL or header; an operator can pin another one per
// connection (ad_destinations.api_version; a CRM connection's api_version setting).
// sunsetWarnings() drives the start-up log line, the /readyz detail and the
// sightline_crm_sync_api_sunset_days gauge; api-versions.test.ts fails once a default here is past
// its sunset, so the table is bumped before a provider turns a version off.
import type { AdConnectionPlatform } from './writeback/connection';

export type ProviderApi = 'google_ads' | 'google_data_manager' | 'meta_graph' | 'linkedin_marketing' | 'salesforce_rest' | 'pipedrive';

export interface ApiVersionRow {
  version: string;
  /** The first day the provider no longer serves this version (UTC, YYYY-MM-DD). */
  sunset: string;
  source: string;
}

export const PROVIDER_APIS: readonly ProviderApi[] = ['google_ads', 'google_data_manager', 'meta_graph', 'linkedin_marketing', 'salesforce_rest', 'pipedrive'];

/** An API with no announced sunset (Data Manager v1, Salesforce v68.0, Pipedrive v2): a date far enough out that it never warns. */
const NO_SUNSET_ANNOUNCED = '2099-12-31';

// Facts as read on 2026-11-28: update a row's version, date and source together.
export const API_VERSIONS: Record<ProviderApi, ApiVersionRow> = {
  // Google Ads API (REST; GAQL searchStream for spend). v26 is the major release of October 2026,
  // the version Google recommends starting with; its sunset is published as a month ("November
  // 2027", one year after release), so the first of that month is used to warn early enough.
  // Schedule: https://developers.google.com/ads/blog/posts/2025/09/more-frequent-releases-coming-for
  google_ads: {
    version: 'v26',
    sunset: '2027-11-01',
    source: 'https://developers.google.com/google-ads/api/docs/sunset-dates',
  },
  // Data Manager API (events:ingest, requestStatus:retrieve): v1 is the only version, no sunset announced.
  google_data_manager: {
    version: 'v1',
    sunset: NO_SUNSET_ANNOUNCED,
    source: 'https://developers.google.com/data-manager/api/reference/rest',
  },
  // Meta Graph / Marketing API (insights, CAPI): v25.0 (introduced 2026-02-18) is the newest
  // version with a published end date, 2028-07-29; v26.0 and later still read "TBD".
  meta_graph: {
    version: 'v25.0',
    sunset: '2028-07-29',
    source: 'https://developers.facebook.com/docs/graph-api/changelog/versions/',
  },
  // LinkedIn Marketing API (adAnalytics, conversionEvents): monthly YYYYMM versions sent in the
  // Linkedin-Version header, each supported at least one year. 202603 is the newest version whose
  // sunset (2027-03-16) the migrations table publishes. Policy: https://learn.microsoft.com/en-us/linkedin/marketing/versioning
  linkedin_marketing: {
    version: '202603',
    sunset: '2027-03-16',
    source: 'https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations',
  },
  // Salesforce REST API: v68.0 is Winter '27 (October 2026). Salesforce supports a version at least
  // three years and announces a retirement about a year ahead; none is announced for v68.0.
  salesforce_rest: {
    version: 'v68.0',
    sunset: NO_SUNSET_ANNOUNCED,
    source: 'https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/dome_versions.htm',
  },
  // Pipedrive: API v2 for lists and writes (v1 only for a deal's changelog, which v2 lacks); no
  // end announced for either.
  pipedrive: {
    version: 'v2',
    sunset: NO_SUNSET_ANNOUNCED,
    source: 'https://pipedrive.readme.io/docs/pipedrive-api-v2',
  },
};

/** The API an ad connection's `api_version` override pins (Google: the Google Ads API of spend pulls). */
export const PLATFORM_API: Record<AdConnectionPlatform, ProviderApi> = { google_ads: 'google_ads', meta_ads: 'meta_graph', linkedin_ads: 'linkedin_marketing' };

/** The form each API's versions take, for checking an operator's override. */
export const VERSION_FORMATS: Record<ProviderApi, { pattern: RegExp; example: string }> = {
  google_ads: { pattern: /^v\d+$/, example: 'v26' },
  google_data_manager: { pattern: /^v\d+$/, example: 'v1' },
  meta_graph: { pattern: /^v\d+\.\d+$/, example: 'v25.0' },
  linkedin_marketing: { pattern: /^\d{6}(\.\d{2})?$/, example: '202603' },
  salesforce_rest: { pattern: /^v\d{2,3}\.0$/, example: 'v68.0' },
  pipedrive: { pattern: /^v\d+$/, example: 'v2' },
};

/** Why `version` cannot pin `api`, or null when it has the API's form. */
export function versionProblem(api: ProviderApi, version: string): string | null {
  const format = VERSION_FORMATS[api];
  return format.pattern.test(version) ? null : `api_version "${version}" is not a ${api} version (such as ${format.example})`;
}

/** Warn this many days ahead of a sunset. */
export const SUNSET_WARNING_DAYS = 60;

/** The version a connector should call: the connection's override when an operator set one, else the table's. */
export function apiVersion(api: ProviderApi, override?: string | null): string {
  const pinned = override?.trim();
  return pinned ? pinned : API_VERSIONS[api].version;
}

export interface SunsetWarning {
  api: ProviderApi;
  version: string;
  sunset: string;
  /** Whole days from `now` to the sunset day (0 on the day, negative once past). */
  daysLeft: number;
}

const DAY_MS = 86_400_000;

/** Whole UTC days from `now`'s day to `sunset`. */
export function daysUntil(sunset: string, now: Date): number {
  const end = Date.parse(`${sunset}T00:00:00Z`);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Math.round((end - today) / DAY_MS);
}

/** Each default version within `withinDays` of its sunset (or already past it), soonest first. */
export function sunsetWarnings(now: Date, withinDays = SUNSET_WARNING_DAYS): SunsetWarning[] {
  return PROVIDER_APIS.map((api) => ({ api, version: API_VERSIONS[api].version, sunset: API_VERSIONS[api].sunset, daysLeft: daysUntil(API_VERSIONS[api].sunset, now) }))
    .filter((w) => w.daysLeft <= withinDays)
    .sort((a, b) => a.daysLeft - b.daysLeft);
}

/** One line per warning, as the start-up log and /readyz state it. */
export function sunsetMessage(w: SunsetWarning): string {
  return w.daysLeft <= 0
    ? `${w.api} ${w.version} reached its sunset on ${w.sunset}: requests fail until src/api-versions.ts (or the connection's api_version) moves to a supported version`
    : `${w.api} ${w.version} reaches its sunset on ${w.sunset} (${w.daysLeft} days left): move src/api-versions.ts to a newer version`;
}
