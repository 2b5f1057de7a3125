// Works out where a hit came from: source, medium and campaign fields from UTM parameters, ad click
// ids or the referrer, the referrer's registrable domain, and a key that changes when the campaign does.
import { getDomain } from 'tldts';
import { CLICK_ID_NAMES, UTM_FIELDS, type ClickIds, type SourceCategory, type UtmValues } from './rule-types';
import { LruCache } from './lru-cache';
import type { SourceIndex, SourceInfo } from './source-index';

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

export interface TrafficResolver {
  (input: TrafficInput): TrafficSource;
  /** Entries held by its caches (bounded in size and age), for the cache gauges. */
  cacheSizes(): { referrer_hosts: number; referrers: number };
}

/** Facts about one referrer host as seen from one site; memoised because hosts repeat endlessly. */
interface HostFacts {
  internal: boolean;
  domain: string | null;
  info: SourceInfo | null;
}

export function createTrafficResolver(sources: SourceIndex, options: { hostCacheSize?: number } = {}): TrafficResolver {
  const hostCache = new LruCache<string, HostFacts>(options.hostCacheSize ?? 5000);
  const hostFacts = (host: string, appPackage: boolean, siteDomain: string): HostFacts => {
    const key = `${appPackage ? 'app' : 'web'}\n${siteDomain}\n${host}`;
    let facts = hostCache.get(key);
    if (facts === undefined) {
      facts = appPackage
        ? { internal: false, domain: host, info: sources.lookupExactHost(host) }
        : isInternalHost(host, siteDomain)
          ? { internal: true, domain: null, info: null }
          : { internal: false, domain: registrableDomain(host), info: sources.lookupHost(host) };
      hostCache.set(key, facts);
    }
    return facts;
  };

  // Referrer strings repeat too ("https://www.google.com/"), and URL parsing is a large share of the cost.
  const referrerCache = new LruCache<string, { host: string; appPackage: boolean } | null>(options.hostCacheSize ?? 5000);
  const parseReferrerCached = (referrer: string | null) => {
    if (!referrer || referrer.length > 256) return parseReferrer(referrer);
    let parsed = referrerCache.get(referrer);
    if (parsed === undefined) {
      parsed = parseReferrer(referrer);
      referrerCache.set(referrer, parsed);
    }
    return parsed;
  };

  const resolve = (input: TrafficInput): TrafficSource => {
    const params = input.url && input.url.search.length > 1 ? input.url.searchParams : null;
    const utm = readUtm(params, input.utm);
    const click_ids = readClickIds(params);
    const ref = parseReferrerCached(input.referrer);
    const facts = ref ? hostFacts(ref.host, ref.appPackage, input.siteDomain) : null;
    const externalHost = ref && facts && !facts.internal ? ref.host : null;

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
    } else if (externalHost !== null) {
      const info = facts?.info ?? null;
      source = info?.name ?? (externalHost.startsWith('www.') ? externalHost.slice(4) : externalHost);
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
      referrer_domain: externalHost !== null ? (facts?.domain ?? null) : null,
      sourceCategory,
      campaign_key: campaignKey(utm, click_ids, source, medium, campaign, term, content),
    };
  };
  return Object.assign(resolve, { cacheSizes: () => ({ referrer_hosts: hostCache.size, referrers: referrerCache.size }) });
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

/** Host of a web or Android-app referrer (lower-case); null when empty, unparsable or another scheme. */
export function parseReferrer(referrer: string | null): { host: string; appPackage: boolean } | null {
  if (!referrer) return null;
  let url: URL;
  try {
    url = new URL(referrer.trim());
  } catch {
    return null;
  }
  // Android apps send android-app://<package>/ as the referrer.
  if (url.protocol === 'android-app:') return url.hostname ? { host: url.hostname.toLowerCase(), appPackage: true } : null;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const host = url.hostname.replace(/\.$/, '');
  return host ? { host, appPackage: false } : null;
}

/** The site itself, a subdomain of it, or another host under the same registrable domain. */
export function isInternalHost(host: string, siteDomain: string): boolean {
  const site = normaliseSiteDomain(siteDomain);
  if (site.host === '') return false;
  if (host === site.host || host.endsWith(`.${site.host}`)) return true;
  return registrableDomain(host) === site.domain;
}

/** Accepts "example.com", "www.example.com" or a pasted "https://example.com/". */
function normaliseSiteDomain(siteDomain: string): { host: string; domain: string } {
  const host = siteDomain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/:?#].*$/, '')
    .replace(/\.$/, '');
  return { host, domain: host === '' ? '' : registrableDomain(host) };
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
  // Hashed so the key has a fixed, small size whatever the parameters hold; not a security boundary.
  return `c1:${hash64(JSON.stringify([source, medium, campaign, term, content, clickParts]))}`;
}

/** Two FNV-1a 32-bit passes with different offsets: 16 hex digits, far cheaper than a crypto hash. */
function hash64(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
