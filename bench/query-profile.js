// The traffic mix of the query benchmark's synthetic workspace: channels with the sources,
// mediums, campaigns and ad platforms each one carries, and the skewed lists (pages, countries,
// devices) sessions draw from. Weights are relative; query-data.js turns them into cumulative
// arrays that ClickHouse samples with arrayFirstIndex. Constant: every run generates the same mix.

/** Zipf-like weights 1/(i+1)^s for a list of n items. */
const zipf = (n, s = 1) => Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s);

const words = ['spring', 'summer', 'autumn', 'winter', 'launch', 'brand', 'promo', 'retarget', 'lookalike', 'webinar', 'ebook', 'trial', 'demo', 'pricing', 'competitor', 'generic'];
const markets = ['us', 'uk', 'de', 'fr', 'nl', 'nordics', 'dach', 'emea', 'apac', 'latam'];
/** `count` campaign names with a channel prefix, e.g. `ps_brand_us`, most popular first. */
function campaigns(prefix, count) {
  return Array.from({ length: count }, (_, i) => `${prefix}_${words[i % words.length]}_${markets[Math.floor(i / words.length) % markets.length]}${i >= words.length * markets.length ? `_${i}` : ''}`);
}

const referralSites = Array.from({ length: 300 }, (_, i) => (i < 12
  ? ['news.ycombinator.com', 'producthunt.com', 'g2.com', 'capterra.com', 'medium.com', 'dev.to', 'stackoverflow.com', 'github.com', 'wikipedia.org', 'techcrunch.com', 'forbes.com', 'substack.com'][i]
  : `blog-${i}.example.org`));

/**
 * One entry per channel: share of a person's first session (`first`) and of later sessions
 * (`later`), the sources with their weights, referrer domain, ad platform and click id key per
 * source, the medium, and the channel's campaigns (most popular first; empty when untagged).
 */
const CHANNELS = [
  { name: 'Organic Search', first: 30, later: 17, medium: 'organic', sources: [['google', 85, 'www.google.com'], ['bing', 8, 'www.bing.com'], ['duckduckgo', 4, 'duckduckgo.com'], ['yahoo', 2, 'search.yahoo.com'], ['ecosia', 1, 'www.ecosia.org']] },
  { name: 'Direct', first: 16, later: 32, medium: '(none)', sources: [['(direct)', 1, '']] },
  { name: 'Paid Search', first: 13, later: 8, medium: 'cpc', paid: true, campaigns: campaigns('ps', 40),
    sources: [['google', 80, 'www.google.com', 'google_ads', 'gclid'], ['bing', 20, 'www.bing.com', 'microsoft_ads', 'msclkid']] },
  { name: 'Paid Social', first: 10, later: 6, medium: 'paid_social', paid: true, campaigns: campaigns('social', 60),
    sources: [['facebook', 50, 'm.facebook.com', 'meta_ads', 'fbclid'], ['instagram', 25, 'l.instagram.com', 'meta_ads', 'fbclid'], ['linkedin', 15, 'www.linkedin.com', 'linkedin_ads', 'li_fat_id'], ['tiktok', 10, 'www.tiktok.com', 'tiktok_ads', 'ttclid']] },
  { name: 'Organic Social', first: 8, later: 6, medium: 'social', sources: [['linkedin', 35, 'www.linkedin.com'], ['facebook', 20, 'm.facebook.com'], ['x', 20, 't.co'], ['reddit', 15, 'www.reddit.com'], ['youtube', 10, 'www.youtube.com']] },
  { name: 'Referral', first: 9, later: 6, medium: 'referral', sources: referralSites.map((site, i) => [site, zipf(300, 1.1)[i], site]) },
  { name: 'Email', first: 2, later: 14, medium: 'email', campaigns: campaigns('email', 30), sources: [['newsletter', 60, ''], ['hubspot', 30, ''], ['mailchimp', 10, '']] },
  { name: 'AI Assistants', first: 3, later: 2, medium: 'referral', sources: [['chatgpt.com', 60, 'chatgpt.com'], ['perplexity.ai', 20, 'www.perplexity.ai'], ['gemini.google.com', 10, 'gemini.google.com'], ['claude.ai', 6, 'claude.ai'], ['copilot.microsoft.com', 4, 'copilot.microsoft.com']] },
  { name: 'Display', first: 3, later: 2, medium: 'display', paid: true, campaigns: campaigns('display', 20), sources: [['google', 100, '', 'google_ads', 'gclid']] },
  { name: 'Affiliates', first: 2, later: 1.5, medium: 'affiliate', campaigns: campaigns('aff', 10), sources: [['awin', 50, ''], ['impact', 30, ''], ['partnerize', 20, '']] },
  { name: 'Organic Video', first: 1.5, later: 1, medium: 'video', sources: [['youtube', 90, 'www.youtube.com'], ['vimeo', 10, 'vimeo.com']] },
  { name: 'Unassigned', first: 0.5, later: 1.5, medium: 'qr', sources: [['print', 60, ''], ['event', 40, '']] },
];

const topics = ['attribution', 'utm-guide', 'roas', 'cac', 'ltv', 'funnels', 'cohorts', 'ga4-migration', 'server-side-tracking', 'privacy', 'consent', 'dashboards', 'b2b-pipeline', 'shopify', 'hubspot'];
const PAGES = ['/', '/pricing', '/features', '/demo', '/signup', '/customers', '/integrations', '/docs', '/about', '/contact',
  ...topics.map((t) => `/blog/${t}`), ...topics.map((t) => `/docs/${t}`), ...Array.from({ length: 40 }, (_, i) => `/blog/post-${i + 1}`)];
const LANDING_WEIGHTS = zipf(PAGES.length, 0.9);

const KEYWORDS = ['attribution software', 'marketing attribution', 'multi touch attribution', 'utm tracking', 'roas calculator', 'sightline', 'ga4 alternative', 'customer journey analytics'];
const EVENT_NAMES = ['click_cta', 'video_play', 'scroll_75', 'form_start', 'download'];
const COUNTRIES = [['US', 34], ['DE', 11], ['GB', 10], ['FR', 7], ['NL', 5], ['CA', 5], ['IN', 5], ['AU', 3], ['ES', 3], ['IT', 3], ['SE', 2], ['BR', 2], ['PL', 2], ['CH', 2], ['JP', 2], ['AT', 1], ['BE', 1], ['DK', 1], ['IE', 1]];
const DEVICES = [['desktop', 56], ['mobile', 40], ['tablet', 4]];
const BROWSERS = [['Chrome', 62], ['Safari', 21], ['Edge', 7], ['Firefox', 6], ['Samsung Internet', 3], ['Opera', 1]];
const SYSTEMS = [['Windows', 38], ['iOS', 24], ['Android', 18], ['Mac OS', 16], ['Linux', 3], ['Chrome OS', 1]];
const CONVERSION_NAMES = [['signup', 55], ['demo_request', 30], ['contact_sales', 15]];

module.exports = { CHANNELS, PAGES, LANDING_WEIGHTS, KEYWORDS, EVENT_NAMES, COUNTRIES, DEVICES, BROWSERS, SYSTEMS, CONVERSION_NAMES };
