// One hit in, its classification out: bot flag, browser/OS/device, geo, page, traffic source and
// channel. Pure once created: no stores, no network; only the rule files and geo database are read,
// once, by createClassifier.
import { loadChannelRules, matchChannel, ChannelRulesError, type CompiledRule, type LoadedRules } from './channel-rules';
import { openGeoLookup, type GeoLookup } from './geo';
import type { ClickIds, RuleExample, UtmValues } from './rule-types';
import { createTrafficResolver } from './traffic-source';
import { createUserAgentParser, type DeviceType } from './user-agent';

export interface HitContext {
  /** Page URL with its query string: UTM parameters and click ids are read from it. */
  url: string | null;
  /** document.referrer or the Referer header. */
  referrer: string | null;
  userAgent: string | null;
  /** Used for the geo lookup only; never returned. */
  ip: string | null;
  /** The website's domain: a referrer on it or a subdomain of it is internal, not a source. */
  siteDomain: string;
  /** Explicit values (server events); each beats the same parameter on the URL. */
  utm?: UtmValues;
}

export interface Classification {
  bot: boolean;
  browser: string | null;
  operating_system: string | null;
  device_type: DeviceType | null;
  /** ISO 3166-1 alpha-2. */
  country: string | null;
  region: string | null;
  city: string | null;
  hostname: string | null;
  /** URL path, percent-decoded when that is valid. */
  page: string | null;
  /** Registrable domain of an external referrer; null when internal or empty. */
  referrer_domain: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  click_ids: ClickIds;
  channel: string;
  /** Id of the rule row that matched ('unassigned' when none did). */
  channel_rule: string;
  /** Changes when the campaign parameters (UTM, click ids) change; '' when the hit carries none. */
  campaign_key: string;
}

export interface Classifier {
  classify(ctx: HitContext): Classification;
  /** Version of the rule table in use, e.g. "channel-rules.v1/sources.v1+acme-2". */
  readonly rulesVersion: string;
  /** What geo database is loaded (for logs). */
  readonly geoDescription: string;
  /** Entries held by each of its caches (every one bounded in size and age), for the cache gauges. */
  cacheSizes(): Record<string, number>;
}

export interface ClassifierOptions {
  /** Operator's JSON file of extra rows and sources (see README.md in this folder). */
  extraRulesFile?: string;
  /** An MMDB file to use instead of the bundled DB-IP Lite city database; null turns geo off. */
  geoDatabasePath?: string | null;
  /** Memoised user agent parses (default 5000). */
  userAgentCacheSize?: number;
}

export async function createClassifier(options: ClassifierOptions = {}): Promise<Classifier> {
  const rules = await loadChannelRules(options.extraRulesFile ? { extraRulesFile: options.extraRulesFile } : {});
  const geo = await openGeoLookup(options.geoDatabasePath);
  const classifier = buildClassifier(rules, geo, options.userAgentCacheSize);
  // An operator's rows must prove themselves at start-up: each example has to land on its own row.
  const failure = findExampleFailures(classifier, rules.rules.filter((r) => r.origin !== 'built-in'))[0];
  if (failure) throw new ChannelRulesError(`${failure.rule.origin}: ${failure.message}`, failure.rule.origin, failure.rule.id);
  return classifier;
}

/** Builds a classifier from loaded parts (synchronous; tests use it with geo off). */
export function buildClassifier(rules: LoadedRules, geo: GeoLookup, userAgentCacheSize?: number): Classifier {
  const userAgents = createUserAgentParser(userAgentCacheSize ? { cacheSize: userAgentCacheSize } : {});
  const resolveTraffic = createTrafficResolver(rules.sources);
  return {
    rulesVersion: rules.version,
    geoDescription: geo.description,
    cacheSizes: () => ({ user_agents: userAgents.cacheSize(), ...geo.cacheSizes(), ...resolveTraffic.cacheSizes() }),
    classify(ctx) {
      const ua = userAgents.parse(ctx.userAgent);
      const geoInfo = geo.lookup(ctx.ip);
      const url = parsePageUrl(ctx.url);
      const traffic = resolveTraffic({ url, referrer: ctx.referrer, siteDomain: ctx.siteDomain, utm: ctx.utm });
      const { channel, ruleId } = matchChannel(rules.rules, {
        source: traffic.source,
        medium: traffic.medium,
        campaign: traffic.campaign,
        sourceCategory: traffic.sourceCategory,
        clickIds: traffic.click_ids,
      });
      return {
        bot: ua.bot,
        browser: ua.browser,
        operating_system: ua.operating_system,
        device_type: ua.device_type,
        country: geoInfo.country,
        region: geoInfo.region,
        city: geoInfo.city,
        hostname: url ? url.hostname || null : null,
        page: url ? pagePath(url) : null,
        referrer_domain: traffic.referrer_domain,
        source: traffic.source,
        medium: traffic.medium,
        campaign: traffic.campaign,
        term: traffic.term,
        content: traffic.content,
        click_ids: traffic.click_ids,
        channel,
        channel_rule: ruleId,
        campaign_key: traffic.campaign_key,
      };
    },
  };
}

/** The site every rule example is a hit on. */
export const EXAMPLE_SITE = 'example.com';

export function exampleHit(example: RuleExample): HitContext {
  const hit: HitContext = {
    url: example.url ?? `https://${EXAMPLE_SITE}/`,
    referrer: example.referrer ?? null,
    userAgent: null,
    ip: null,
    siteDomain: EXAMPLE_SITE,
  };
  if (example.utm) hit.utm = example.utm;
  return hit;
}

/** Examples that do not land on their own row or break their `expect`; empty when all hold. */
export function findExampleFailures(
  classifier: Classifier,
  rules: readonly CompiledRule[],
): { rule: CompiledRule; message: string }[] {
  const failures: { rule: CompiledRule; message: string }[] = [];
  for (const rule of rules) {
    rule.row.examples.forEach((example, i) => {
      const got = classifier.classify(exampleHit(example));
      const where = `row "${rule.id}" example ${i + 1} (${example.url ?? ''}${example.referrer ? ` from ${example.referrer}` : ''})`;
      if (got.channel_rule !== rule.id) {
        failures.push({ rule, message: `${where} lands on row "${got.channel_rule}" (${got.channel}), not on its own row` });
        return;
      }
      for (const field of ['source', 'medium', 'campaign'] as const) {
        const want = example.expect?.[field];
        if (want !== undefined && got[field] !== want) {
          failures.push({ rule, message: `${where} gives ${field} ${JSON.stringify(got[field])}, expected ${JSON.stringify(want)}` });
        }
      }
    });
  }
  return failures;
}

function parsePageUrl(raw: string | null): URL | null {
  if (!raw) return null;
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

function pagePath(url: URL): string {
  const path = url.pathname || '/';
  if (!path.includes('%')) return path;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}
