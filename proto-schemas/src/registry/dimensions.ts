// Dimensions for group_by and filter. One list, flagged per use, so GET /schema, the OpenAPI enums
// and the SQL compiler cannot disagree about what exists.
import { OPERATOR_NAMES, type OperatorName } from './operators';

export const GROUP_BY_DIMENSIONS = [
  'channel', 'source', 'medium', 'campaign', 'utm_term', 'utm_content', 'referrer_domain', 'page',
  'landing_page', 'hostname', 'page_title', 'country', 'region', 'city', 'device_type', 'browser',
  'operating_system', 'resolution', 'platform', 'ad_campaign', 'ad_set', 'ad', 'cohort',
] as const;

export const FILTER_DIMENSIONS = [
  'channel', 'source', 'medium', 'campaign', 'utm_term', 'utm_content', 'referrer_domain', 'page',
  'landing_page', 'hostname', 'page_title', 'country', 'region', 'city', 'device_type', 'browser',
  'operating_system', 'resolution', 'event_name', 'event_type', 'identified', 'platform', 'ad_campaign',
  'ad_set', 'ad', 'campaign_type', 'match_type', 'company_domain', 'crm_stage', 'crm_account_stage',
] as const;

export type GroupByDimension = (typeof GROUP_BY_DIMENSIONS)[number];
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];
export type DimensionName = GroupByDimension | FilterDimension;

/**
 * What a dimension describes, which decides how the compiler joins it: a session (touch) attribute,
 * an event attribute, an ad-platform attribute, a person, an outcome, or a CRM record.
 */
export type DimensionEntity = 'session' | 'event' | 'ad' | 'person' | 'outcome' | 'crm';

export interface DimensionDefinition {
  name: DimensionName;
  description: string;
  entity: DimensionEntity;
  groupable: boolean;
  filterable: boolean;
  /** Operators allowed in a filter on this dimension (empty when not filterable). */
  operators: readonly OperatorName[];
  /** The fixed set of values, when there is one; null for free text. */
  values: readonly string[] | null;
}

export const RESOLUTION_VALUES = ['attributed', 'unmatched', 'predates_tracking', 'imported_contact'] as const;

type Entry = Omit<DimensionDefinition, 'groupable' | 'filterable' | 'operators' | 'values'> & {
  operators?: readonly OperatorName[];
  values?: readonly string[];
};

const ENTRIES: readonly Entry[] = [
  { name: 'channel', entity: 'session', description: 'Channel of the session, from the shipped channel rule table (GA4-style default grouping plus AI assistants), for example Organic Search or Paid Social. A conversion with no touch is credited to Unattributed.' },
  { name: 'source', entity: 'session', description: 'utm_source of the session, or the referring site when no utm_source was set.' },
  { name: 'medium', entity: 'session', description: 'utm_medium of the session, or the medium inferred from the referrer (organic, referral, none).' },
  { name: 'campaign', entity: 'session', description: 'utm_campaign of the session.' },
  { name: 'utm_term', entity: 'session', description: 'utm_term of the session.' },
  { name: 'utm_content', entity: 'session', description: 'utm_content of the session.' },
  { name: 'referrer_domain', entity: 'session', description: 'Host name of the referrer that started the session, without www.; empty for direct visits.' },
  { name: 'page', entity: 'event', description: 'Path of the page viewed (no query string). Traffic metrics only: credit goes to touches (sessions), so credited metrics group by landing_page instead.' },
  { name: 'landing_page', entity: 'session', description: 'Path of the first page of the session.' },
  { name: 'hostname', entity: 'event', description: 'Host name the page was served from, for sites spanning several hosts. Traffic metrics only: credit goes to touches (sessions), so credited metrics group by landing_page instead.' },
  { name: 'page_title', entity: 'event', description: 'Document title of the page viewed. Traffic metrics only: credit goes to touches (sessions), so credited metrics group by landing_page instead.' },
  { name: 'country', entity: 'session', description: 'Country of the visitor as an ISO 3166-1 alpha-2 code, from the IP address at collection (the address is not stored).' },
  { name: 'region', entity: 'session', description: 'Region or state of the visitor, from the IP address at collection.' },
  { name: 'city', entity: 'session', description: 'City of the visitor, from the IP address at collection.' },
  { name: 'device_type', entity: 'session', description: 'desktop, mobile or tablet, from the user agent.' },
  { name: 'browser', entity: 'session', description: 'Browser family, from the user agent.' },
  { name: 'operating_system', entity: 'session', description: 'Operating system family, from the user agent.' },
  { name: 'resolution', entity: 'outcome', values: RESOLUTION_VALUES, operators: ['eq', 'ne', 'in', 'nin'],
    description: 'Why an outcome has or lacks a journey: attributed (it has one), unmatched (no visitor could be matched), predates_tracking (the customer relationship began before tracking), imported_contact (created by an import). Only with credited metrics (conversions, revenue, milestones).' },
  { name: 'event_name', entity: 'event', description: 'Name of the event as sent by the tracker or POST /events. For credited metrics, the name of the conversion event.' },
  { name: 'event_type', entity: 'event', description: 'Type of the event, for example pageview or custom. For credited metrics, the type of the conversion event (conversion, purchase).' },
  { name: 'identified', entity: 'person', values: ['true', 'false'], operators: ['eq', 'ne'],
    description: 'true when the person is known by an email (given with a conversion), false when only by anonymous id.' },
  { name: 'platform', entity: 'ad', description: 'Ad platform of a paid touch, for example google_ads or meta_ads: from its ad click id (gclid, msclkid, ttclid, li_fat_id, ...) or, for paid traffic without one, its source; empty for unpaid touches. As group_by it joins ad spend and takes no other dimension.' },
  { name: 'ad_campaign', entity: 'ad', description: 'Ad campaign of a paid touch: its utm_campaign, which joins the ad platform\'s campaign name in spend reports; empty for unpaid touches. As group_by it joins ad spend and takes no other dimension.' },
  { name: 'ad_set', entity: 'ad', description: 'Ad set or ad group of a paid touch, read from its utm_term (the common tagging convention for ad groups); empty for unpaid touches.' },
  { name: 'ad', entity: 'ad', description: 'Individual ad of a paid touch, read from its utm_content (the common tagging convention for ads); empty for unpaid touches.' },
  { name: 'campaign_type', entity: 'ad', description: 'Campaign type of a paid touch inferred from its medium: search (cpc, ppc), shopping, video, social, display or other; empty for unpaid touches.' },
  { name: 'match_type', entity: 'ad', description: 'Search keyword match type (exact, phrase, broad). Tracked touches do not carry it, so it is empty for every touch: eq and in match nothing, ne, nin and not_contains keep everything.' },
  { name: 'company_domain', entity: 'crm', description: 'Email domain of the conversion. Applies to credited metrics only.' },
  { name: 'crm_stage', entity: 'crm', description: 'The latest milestone stage the converting person reached (milestone.reached from the CRM, or a status set on the contact). Applies to credited metrics only.' },
  { name: 'crm_account_stage', entity: 'crm', description: 'The latest company-level milestone stage of the converting person\'s company in the CRM. Applies to credited metrics only.' },
  { name: 'cohort', entity: 'outcome', description: 'Signup month of the customer (YYYY-MM). As group_by it returns a retention curve whose rows are identified by (cohort, period_index).' },
];

const groupable = new Set<string>(GROUP_BY_DIMENSIONS);
const filterable = new Set<string>(FILTER_DIMENSIONS);

export const DIMENSIONS: readonly DimensionDefinition[] = ENTRIES.map((entry) => ({
  name: entry.name,
  description: entry.description,
  entity: entry.entity,
  groupable: groupable.has(entry.name),
  filterable: filterable.has(entry.name),
  operators: filterable.has(entry.name) ? (entry.operators ?? OPERATOR_NAMES) : [],
  values: entry.values ?? null,
}));

/** Dimensions a funnel breakdown can credit: attributes of the sessions a person touched. */
export const TOUCH_DIMENSIONS: readonly DimensionName[] = DIMENSIONS
  .filter((d) => d.entity === 'session' && d.groupable)
  .map((d) => d.name);
