// Everything derived once per run from the options and the model: lookup tables, parsed IP ranges,
// the per-day volume curve. Kept apart so ad spend can use the same volume curve as the visits.
import {
  BROWSERS, buildCampaigns, buildSite, CHANNELS, COUNTRIES, HOUR_WEIGHTS, NEXT_PAGE, WEEKDAY_WEIGHTS,
  type AdPlatform, type BrowserDef, type CampaignDef, type CampaignKind, type ChannelDef, type ChannelKey,
  type CountryDef, type DeviceType, type PageSection, type SiteModel, type SourceDef,
} from './model';
import { apportion, hash32, hashString, Rng, WeightedTable } from './random';
import type { GenerateOptions, ResolvedOptions } from './types';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Average return sessions per person; used to turn new-visitor counts into expected sessions for ad spend. */
export const RETURN_SESSIONS_PER_PERSON = 0.75;

export function resolveOptions(options: GenerateOptions): ResolvedOptions {
  const { seed, days, visitors, domain } = options;
  if (!Number.isInteger(seed)) throw new Error('seed must be an integer');
  if (!Number.isInteger(days) || days < 1) throw new Error('days must be a positive integer');
  if (!Number.isInteger(visitors) || visitors < 0) throw new Error('visitors must be a non-negative integer');
  if (!/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(domain)) throw new Error(`domain is not a host name: ${domain}`);
  const currency = options.currency ?? 'USD';
  if (!/^[A-Z]{3}$/.test(currency)) throw new Error('currency must be an ISO 4217 code such as USD');
  let end: number;
  if (options.endDate) {
    end = options.endDate.getTime();
    if (Number.isNaN(end)) throw new Error('endDate is not a valid date');
  } else {
    const now = new Date();
    end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  }
  return { seed: seed >>> 0, days, visitors, domain: domain.toLowerCase(), currency, siteId: options.siteId ?? domain.toLowerCase(), start: end - days * DAY, end };
}

export interface IpRange { base: number; size: number }
export interface CountryInfo { def: CountryDef; ranges: IpRange[] }

function parseCidr(cidr: string): IpRange {
  const [addr, bits] = cidr.split('/');
  const octets = (addr ?? '').split('.').map(Number);
  const base = (((octets[0] ?? 0) << 24) >>> 0) + ((octets[1] ?? 0) << 16) + ((octets[2] ?? 0) << 8) + (octets[3] ?? 0);
  return { base, size: 2 ** (32 - Number(bits)) };
}

export interface Context {
  opts: ResolvedOptions;
  site: SiteModel;
  campaigns: CampaignDef[];
  firstChannel: WeightedTable<ChannelDef>;
  returnChannel: WeightedTable<ChannelDef>;
  sources: Map<ChannelKey, WeightedTable<SourceDef>>;
  landings: Map<ChannelKey, WeightedTable<string>>;
  nextPage: Map<PageSection, WeightedTable<string>>;
  countries: WeightedTable<CountryInfo>;
  deviceTypes: WeightedTable<DeviceType>;
  browsers: Map<DeviceType, WeightedTable<BrowserDef>>;
  hours: WeightedTable<number>;
  /** New people per day, summing exactly to opts.visitors. */
  newPerDay: number[];
}

export function buildContext(opts: ResolvedOptions): Context {
  const site = buildSite(opts.domain);
  const deviceWeights = new Map<DeviceType, number>();
  for (const b of BROWSERS) deviceWeights.set(b.device, (deviceWeights.get(b.device) ?? 0) + b.weight);
  const browsers = new Map<DeviceType, WeightedTable<BrowserDef>>();
  for (const type of deviceWeights.keys()) browsers.set(type, WeightedTable.of(BROWSERS.filter((b) => b.device === type)));
  return {
    opts,
    site,
    campaigns: buildCampaigns(site.brand),
    firstChannel: WeightedTable.of(CHANNELS),
    returnChannel: new WeightedTable(CHANNELS.map((c) => [c, c.returnWeight] as const)),
    sources: new Map(CHANNELS.map((c) => [c.key, WeightedTable.of(c.sources)])),
    landings: new Map(CHANNELS.map((c) => [c.key, new WeightedTable(c.landings)])),
    nextPage: new Map(Object.entries(NEXT_PAGE).map(([section, entries]) => [section as PageSection, new WeightedTable(entries)])),
    countries: new WeightedTable(COUNTRIES.map((def) => [{ def, ranges: def.ranges.map(parseCidr) }, def.weight] as const)),
    deviceTypes: new WeightedTable([...deviceWeights.entries()]),
    browsers,
    hours: new WeightedTable(HOUR_WEIGHTS.map((w, h) => [h, w] as const)),
    newPerDay: newPeoplePerDay(opts),
  };
}

/** Daily volume: weekday rhythm, gentle growth over the window, and a little day-to-day noise. */
function newPeoplePerDay(opts: ResolvedOptions): number[] {
  const rng = new Rng(hash32(opts.seed, hashString('volume')));
  const weights: number[] = [];
  for (let d = 0; d < opts.days; d++) {
    const weekday = new Date(opts.start + d * DAY).getUTCDay();
    const growth = 1 + (0.3 * d) / Math.max(1, opts.days - 1);
    weights.push((WEEKDAY_WEIGHTS[weekday] ?? 1) * growth * rng.lognormal(1, 0.08));
  }
  return apportion(opts.visitors, weights);
}

export function isCampaignActive(c: CampaignDef, day: number, days: number): boolean {
  return day >= Math.floor(c.activeFrom * days) && day < Math.ceil(c.activeTo * days);
}

/** Campaign tables for one day: only campaigns in flight can send clicks. */
export function campaignTables(ctx: Context, day: number): Map<string, WeightedTable<CampaignDef>> {
  const groups = new Map<string, CampaignDef[]>();
  for (const c of ctx.campaigns) {
    const key = campaignKey(c.platform, c.kind);
    const list = groups.get(key) ?? [];
    list.push(c);
    groups.set(key, list);
  }
  const tables = new Map<string, WeightedTable<CampaignDef>>();
  for (const [key, list] of groups) {
    const active = list.filter((c) => isCampaignActive(c, day, ctx.opts.days));
    // A platform with every campaign paused still gets its odd late click; credit the first campaign.
    tables.set(key, WeightedTable.of(active.length > 0 ? active : list.slice(0, 1)));
  }
  return tables;
}

export function campaignKey(platform: AdPlatform, kind: CampaignKind): string {
  return `${platform}:${kind}`;
}
