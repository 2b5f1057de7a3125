// Each dimension as a ClickHouse expression in the three places a /metrics query reads it:
//   traffic  — a row `e` of traffic_sessions (a session) or traffic_events (an event, carrying its
//              session's attributes);
//   credit   — a journey touch's columns `x_<field>` beside its outcome's columns (after ARRAY JOIN);
//   customer — the customer's acquiring touch `x_<field>` (first touch of their first paid outcome).
// null means the dimension does not apply there (the request is refused as unsupported-combination).
import type { DimensionName } from '@sightline/proto-schemas';
import { touchField, type TouchField } from '../analytics/journey-fields';

export type Place = 'traffic' | 'credit' | 'customer';

const t = (field: TouchField): string => touchField('x', field);

const CAMPAIGN_TYPE = (medium: string, paid: string): string =>
  `if(${paid} = 0, '', multiIf(match(lower(${medium}), '^(cpc|ppc|paid[-_ ]?search|sem)$'), 'search', match(lower(${medium}), 'shopping'), 'shopping', match(lower(${medium}), 'video|cpv'), 'video', match(lower(${medium}), 'social'), 'social', match(lower(${medium}), '^(display|banner|cpm|retargeting|remarketing)$'), 'display', 'other'))`;

/** Touch attributes, the same three ways (traffic reads e.column). */
function touchDimension(column: string, field: TouchField): Record<Place, string> {
  return { traffic: `toString(e.${column})`, credit: t(field), customer: t(field) };
}

const TOUCH: Partial<Record<DimensionName, Record<Place, string>>> = {
  channel: touchDimension('channel', 'channel'),
  source: touchDimension('source', 'source'),
  medium: touchDimension('medium', 'medium'),
  campaign: touchDimension('campaign', 'campaign'),
  utm_term: touchDimension('term', 'term'),
  utm_content: touchDimension('content', 'content'),
  referrer_domain: touchDimension('referrer_domain', 'referrer_domain'),
  landing_page: touchDimension('landing_page', 'landing_page'),
  country: touchDimension('country', 'country'),
  region: touchDimension('region', 'region'),
  city: touchDimension('city', 'city'),
  device_type: touchDimension('device_type', 'device_type'),
  browser: touchDimension('browser', 'browser'),
  operating_system: touchDimension('operating_system', 'operating_system'),
  platform: touchDimension('ad_platform', 'ad_platform'),
  ad_campaign: {
    traffic: `if(e.ad_platform = '', '', e.campaign)`,
    credit: `if(${t('ad_platform')} IN ('', 'Unattributed'), ${t('ad_platform')}, ${t('campaign')})`,
    customer: `if(${t('ad_platform')} IN ('', 'Unattributed'), ${t('ad_platform')}, ${t('campaign')})`,
  },
  // Ad set and ad follow the common tagging convention: utm_term names the ad group, utm_content the ad.
  ad_set: {
    traffic: `if(e.ad_platform = '', '', e.term)`,
    credit: `if(${t('ad_platform')} IN ('', 'Unattributed'), ${t('ad_platform')}, ${t('term')})`,
    customer: `if(${t('ad_platform')} IN ('', 'Unattributed'), ${t('ad_platform')}, ${t('term')})`,
  },
  ad: {
    traffic: `if(e.ad_platform = '', '', e.content)`,
    credit: `if(${t('ad_platform')} IN ('', 'Unattributed'), ${t('ad_platform')}, ${t('content')})`,
    customer: `if(${t('ad_platform')} IN ('', 'Unattributed'), ${t('ad_platform')}, ${t('content')})`,
  },
  // No tracked touch carries a keyword match type; the dimension exists for ad-platform imports.
  match_type: { traffic: "''", credit: "''", customer: "''" },
  campaign_type: {
    traffic: CAMPAIGN_TYPE('e.medium', 'e.is_paid'),
    credit: `if(${t('channel')} = 'Unattributed', 'Unattributed', ${CAMPAIGN_TYPE(t('medium'), t('is_paid'))})`,
    customer: `if(${t('channel')} = 'Unattributed', 'Unattributed', ${CAMPAIGN_TYPE(t('medium'), t('is_paid'))})`,
  },
};

/** Event attributes: only traffic rows have them. */
const EVENT: Partial<Record<DimensionName, string>> = {
  page: 'e.page',
  hostname: 'e.hostname',
  page_title: 'e.page_title',
  event_name: 'e.event_name',
  event_type: 'toString(e.event_type)',
};

/** Outcome attributes (credited reads): columns of the outcome row (see analytics/outcome-rows.sql.ts). */
const OUTCOME: Partial<Record<DimensionName, string>> = {
  event_name: 'event_name',
  event_type: 'event_type',
  identified: `if(email != '', 'true', 'false')`,
  company_domain: `lower(arrayElement(splitByChar('@', email), 2))`,
  resolution: `multiIf(n > 0, 'attributed', origin = 'import', 'imported_contact', relationship_started_at IS NOT NULL AND relationship_started_at < tracking_started_at, 'predates_tracking', 'unmatched')`,
  crm_stage: 'crm_stage',
  crm_account_stage: 'crm_account_stage',
};

export function dimensionSql(name: DimensionName, place: Place): string | null {
  const touch = TOUCH[name];
  if (touch) return touch[place];
  if (place === 'traffic') {
    if (name === 'identified') return `if(e.identity_id IN (SELECT identity_id FROM conversions WHERE website_id = {website:UUID} AND email != ''), 'true', 'false')`;
    return EVENT[name] ?? null;
  }
  if (place === 'credit') return OUTCOME[name] ?? null;
  return null;
}
