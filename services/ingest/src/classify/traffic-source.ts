// Works out where a hit came from: source, medium and campaign fields from UTM parameters, ad click
// ids or the referrer, the referrer's registrable domain, and a key that changes when the campaign does.
import { createHash } from 'node:crypto';
import { getDomain } from 'tldts';
import { CLICK_ID_NAMES, UTM_FIELDS, type ClickIds, type SourceCategory, type UtmValues } from './rule-types';
import type { SourceIndex } from './source-index';

export interface TrafficInput {
  /** The landing page URL, already parsed (null when absent or unparsable). */
  url: URL | null;
  referrer: string | null;
  siteDomain: string;
  /** Explicit values (server events); each one beats the same parameter on the URL. */
  utm?: UtmValues | undefined;
}

export interface TrafficSource {
  source: string;
  medium: string;
  campaign: string | null;
  term: string | null;
  content: string | null;
  click_ids: ClickIds;
  referrer_domain: string | null;
  sourceCategory: SourceCategory | null;
  campaign_key: string;
}

/** Stored values are capped so one odd link cannot bloat a row. */
const MAX_VALUE_LENGTH = 500;

/**
 * Ad click ids appended only to ad clicks, and the source/medium they imply. fbclid is absent on
 * purpose: Facebook appends it to organic shares as well, so a bare fbclid is organic social.
 */
const PAID_CLICK_IDS: readonly { id: 'gclid' | 'gbraid' | 'wbraid' | 'msclkid' | 'ttclid' | 'li_fat_id'; source: string }[] = [
  { id: 'gclid', source: 'google' },
  { id: 'gbraid', source: 'google' },
  { id: 'wbraid', source: 'google' },
  { id: 'msclkid', source: 'bing' },
  { id: 'ttclid', source: 'tiktok' },
  { id: 'li_fat_id', source: 'linkedin' },
];
/** Google auto-tagging beats UTM parameters on the same URL, as it does in GA4. */
const GOOGLE_CLICK_IDS = new Set(['gclid', 'gbraid', 'wbraid']);

export function resolveTrafficSource(input: TrafficInput, sources: SourceIndex): TrafficSource {
  const params = input.url && input.url.search.length > 1 ? input.url.searchParams : null;
  const utm = readUtm(params, input.utm);
  const click_ids = readClickIds(params);
  const referrer = parseReferrer(input.referrer, input.siteDomain);

  const paidClick = PAID_CLICK_IDS.find((c) => click_ids[c.id] !== undefined);
  const explicitSourceOrMedium = input.utm?.source !== undefined || input.utm?.medium !== undefined;
  let source: string;
  let medium: string;
  let sourceCategory: SourceCategory | null;

  if (paidClick && GOOGLE_CLICK_IDS.has(paidClick.id) && !explicitSourceOrMedium) {
    source = paidClick.source;
    medium = 'cpc';
    sourceCategory = sources.lookupSource(source)?.category ?? null;
  } else if (utm.source !== undefined || utm.medium !== undefined) {
    // Tagged links win over referrers; a missing half is "(not set)", as in GA4.
    source = utm.source ?? paidClick?.source ?? '(not set)';
    medium = utm.medium ?? '(not set)';
    sourceCategory = sources.lookupSource(source)?.category ?? null;
  } else if (paidClick) {
    source = paidClick.source;
    medium = 'cpc';
    sourceCategory = sources.lookupSource(source)?.category ?? null;
  } else if (referrer.host !== null) {
    const info = referrer.appPackage ? sources.lookupExactHost(referrer.host) : sources.lookupHost(referrer.host);
    source = info?.name ?? (referrer.host.startsWith('www.') ? referrer.host.slice(4) : referrer.host);
    sourceCategory = info?.category ?? null;
    medium = sources.mediumFor(sourceCategory);
  } else if (click_ids.fbclid !== undefined) {
    // In-app browsers often drop the referrer; the fbclid still says the click came from Facebook.
    const info = sources.lookupSource('facebook');
    source = info?.name ?? 'facebook';
    sourceCategory = info?.category ?? 'social';
    medium = sources.mediumFor(sourceCategory);
  } else {
    source = '(direct)';
    medium = '(none)';
    sourceCategory = null;
  }

  const campaign = utm.campaign ?? null;
  const term = utm.term ?? null;
  const content = utm.content ?? null;
  return {
    source,
    medium,
    campaign,
    term,
    content,
    click_ids,
    referrer_domain: referrer.domain,
    sourceCategory,
    campaign_key: campaignKey(utm, click_ids, source, medium, campaign, term, content),
  };
}

/** Trim; lower-case source and medium; drop empty values; cap the length. */
export function normaliseUtmValue(field: keyof UtmValues, raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  let value = raw.trim();
  if (value === '') return undefined;
  if (field === 'source' || field === 'medium') value = value.toLowerCase();
  return value.length > MAX_VALUE_LENGTH ? value.slice(0, MAX_VALUE_LENGTH) : value;
}

function readUtm(params: URLSearchParams | null, explicit: UtmValues | undefined): UtmValues {
  const out: UtmValues = {};
  for (const field of UTM_FIELDS) {
    const value = normaliseUtmValue(field, explicit?.[field]) ?? normaliseUtmValue(field, params?.get(`utm_${field}`));
    if (value !== undefined) out[field] = value;
  }
  return out;
}

function readClickIds(params: URLSearchParams | null): ClickIds {
  const out: ClickIds = {};
  if (!params) return out;
  for (const name of CLICK_ID_NAMES) {
    const value = params.get(name)?.trim();
    if (value) out[name] = value.length > MAX_VALUE_LENGTH ? value.slice(0, MAX_VALUE_LENGTH) : value;
  }
  return out;
}

interface ParsedReferrer {
  /** External referrer host (lower-case), or null when empty, internal or not a web/app referrer. */
  host: string | null;
  domain: string | null;
  appPackage: boolean;
}

const NO_REFERRER: ParsedReferrer = { host: null, domain: null, appPackage: false };

export function parseReferrer(referrer: string | null, siteDomain: string): ParsedReferrer {
  if (!referrer) return NO_REFERRER;
  let url: URL;
  try {
    url = new URL(referrer.trim());
  } catch {
    return NO_REFERRER;
  }
  // Android apps send android-app://<package>/ as the referrer.
  if (url.protocol === 'android-app:') {
    const pkg = url.hostname.toLowerCase();
    return pkg ? { host: pkg, domain: pkg, appPackage: true } : NO_REFERRER;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return NO_REFERRER;
  const host = url.hostname.replace(/\.$/, '');
  if (!host || isInternalHost(host, siteDomain)) return NO_REFERRER;
  return { host, domain: registrableDomain(host), appPackage: false };
}

/** The site itself, a subdomain of it, or another host under the same registrable domain. */
export function isInternalHost(host: string, siteDomain: string): boolean {
  const site = normaliseSiteDomain(siteDomain);
  if (site.host === '') return false;
  if (host === site.host || host.endsWith(`.${site.host}`)) return true;
  return registrableDomain(host) === site.domain;
}

const siteCache = new Map<string, { host: string; domain: string }>();

/** Accepts "example.com", "www.example.com" or a pasted "https://example.com/"; memoised (few sites). */
function normaliseSiteDomain(siteDomain: string): { host: string; domain: string } {
  const cached = siteCache.get(siteDomain);
  if (cached !== undefined) return cached;
  const host = siteDomain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/:?#].*$/, '')
    .replace(/\.$/, '');
  const site = { host, domain: host === '' ? '' : registrableDomain(host) };
  if (siteCache.size > 10_000) siteCache.clear();
  siteCache.set(siteDomain, site);
  return site;
}

/** Registrable domain (eTLD+1, private suffixes such as github.io respected); IPs and bare hosts as-is. */
export function registrableDomain(host: string): string {
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

function campaignKey(
  utm: UtmValues,
  clickIds: ClickIds,
  source: string,
  medium: string,
  campaign: string | null,
  term: string | null,
  content: string | null,
): string {
  const clickParts = CLICK_ID_NAMES.filter((n) => clickIds[n] !== undefined).map((n) => `${n}=${clickIds[n]}`);
  if (clickParts.length === 0 && Object.keys(utm).length === 0) return '';
  // Hashed so the key has a fixed, small size whatever the parameters hold.
  const material = JSON.stringify([source, medium, campaign, term, content, clickParts]);
  return `c1:${createHash('sha1').update(material).digest('hex').slice(0, 20)}`;
}
