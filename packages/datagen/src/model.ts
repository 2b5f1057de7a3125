// The workspace model: what kind of site, traffic, campaigns, devices and customers the generator
// imitates. Pure data plus a few lookups; the simulation in generate.ts draws from it.

export type AdPlatform = 'google_ads' | 'meta_ads' | 'linkedin_ads' | 'tiktok_ads' | 'microsoft_ads';
export const AD_PLATFORMS: readonly AdPlatform[] = ['google_ads', 'meta_ads', 'linkedin_ads', 'tiktok_ads', 'microsoft_ads'];

export type ClickIdParam = 'gclid' | 'msclkid' | 'fbclid' | 'li_fat_id' | 'ttclid';

export type ChannelKey =
  | 'direct' | 'organic_search' | 'paid_search' | 'organic_social' | 'paid_social' | 'video' | 'email'
  | 'affiliate' | 'display' | 'sms' | 'referral' | 'ai_assistant';

/** One way a visit can arrive within a channel. Paid sources name their platform and the campaign kind they draw from. */
export interface SourceDef {
  weight: number;
  /** Referring page the browser reports, or null (typed-in, apps, many email clients). */
  referrer: string | null;
  utmSource?: string;
  utmMedium?: string;
  clickId?: ClickIdParam;
  platform?: AdPlatform;
  campaignKind?: CampaignKind;
  /** utm_campaign for owned (unpaid) campaigns such as newsletters; paid ones take the campaign's slug. */
  ownedCampaigns?: readonly string[];
}

export interface ChannelDef {
  key: ChannelKey;
  /** Share of first visits. */
  weight: number;
  /** Share of return visits: people come back direct or from email far more than from ads. */
  returnWeight: number;
  /** Multiplier on the base chance that a first visit from this channel becomes a signup. */
  conversionLift: number;
  sources: readonly SourceDef[];
  /** Landing pages (paths) with weights. */
  landings: ReadonlyArray<readonly [string, number]>;
}

export type CampaignKind = 'search' | 'social' | 'video' | 'display';

export interface AdDef { id: string; name: string; slug: string }
export interface AdSetDef { id: string; name: string; ads: readonly AdDef[]; keywords?: readonly string[] }
export interface CampaignDef {
  id: string;
  name: string;
  slug: string;
  platform: AdPlatform;
  kind: CampaignKind;
  /** Relative share of its platform-and-kind's paid visits. */
  weight: number;
  /** Cost per click in workspace currency units (before noise). */
  cpc: number;
  /** Click-through rate used to derive impressions from clicks. */
  ctr: number;
  /** Flight as fractions of the window: campaigns start late or pause, as real ones do. */
  activeFrom: number;
  activeTo: number;
  adSets: readonly AdSetDef[];
}

export interface AdAccountDef { platform: AdPlatform; id: string; name: string }

export const AD_ACCOUNTS: readonly AdAccountDef[] = [
  { platform: 'google_ads', id: '482-193-7750', name: 'Main Google Ads' },
  { platform: 'microsoft_ads', id: 'F1204877', name: 'Microsoft Advertising' },
  { platform: 'meta_ads', id: 'act_1029384756', name: 'Meta Business' },
  { platform: 'linkedin_ads', id: '508812277', name: 'LinkedIn Campaign Manager' },
  { platform: 'tiktok_ads', id: '7301122334455667788', name: 'TikTok For Business' },
];

function slugify(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

interface CampaignSeed {
  name: string;
  platform: AdPlatform;
  kind: CampaignKind;
  weight: number;
  cpc: number;
  ctr: number;
  activeFrom?: number;
  activeTo?: number;
  adSets: ReadonlyArray<{ name: string; ads: readonly string[]; keywords?: readonly string[] }>;
}

const CAMPAIGN_SEEDS: readonly CampaignSeed[] = [
  { name: 'Brand Search', platform: 'google_ads', kind: 'search', weight: 30, cpc: 0.9, ctr: 0.12, adSets: [
    { name: 'Brand - Exact', ads: ['Brand RSA A', 'Brand RSA B'], keywords: ['{brand}', '{brand} login', '{brand} pricing'] },
    { name: 'Brand - Misspellings', ads: ['Brand Misspell RSA'], keywords: ['{brand} app', '{brand} review'] },
  ] },
  { name: 'Generic - Attribution Software', platform: 'google_ads', kind: 'search', weight: 25, cpc: 4.2, ctr: 0.045, adSets: [
    { name: 'Attribution Tools', ads: ['Attribution RSA Benefits', 'Attribution RSA Pricing'], keywords: ['marketing attribution software', 'multi touch attribution', 'attribution tool'] },
    { name: 'Analytics Alternatives', ads: ['Privacy Analytics RSA'], keywords: ['google analytics alternative', 'privacy friendly analytics', 'cookieless analytics'] },
  ] },
  { name: 'Competitor Terms', platform: 'google_ads', kind: 'search', weight: 10, cpc: 6.5, ctr: 0.03, activeFrom: 0.2, adSets: [
    { name: 'Competitors - Exact', ads: ['Compare RSA', 'Switch RSA'], keywords: ['hyros alternative', 'triple whale alternative', 'wicked reports alternative'] },
  ] },
  { name: 'Performance Max - Store', platform: 'google_ads', kind: 'display', weight: 18, cpc: 0.7, ctr: 0.009, adSets: [
    { name: 'All Products', ads: ['PMax Asset Group Main', 'PMax Asset Group Bundles'] },
  ] },
  { name: 'Display Remarketing', platform: 'google_ads', kind: 'display', weight: 12, cpc: 0.45, ctr: 0.004, adSets: [
    { name: 'Site Visitors 30d', ads: ['Banner 300x250 Offer', 'Banner 728x90 Offer'] },
    { name: 'Cart Abandoners 7d', ads: ['Banner Cart Reminder'] },
  ] },
  { name: 'YouTube Awareness', platform: 'google_ads', kind: 'video', weight: 20, cpc: 0.35, ctr: 0.006, activeTo: 0.75, adSets: [
    { name: 'In-Market Marketing Software', ads: ['Explainer 30s', 'Founder Story 15s'] },
  ] },
  { name: 'Bing Brand', platform: 'microsoft_ads', kind: 'search', weight: 8, cpc: 0.6, ctr: 0.1, adSets: [
    { name: 'Brand', ads: ['Bing Brand Text'], keywords: ['{brand}', '{brand} analytics'] },
  ] },
  { name: 'Bing Generic', platform: 'microsoft_ads', kind: 'search', weight: 6, cpc: 2.8, ctr: 0.04, adSets: [
    { name: 'Attribution', ads: ['Bing Attribution Text A', 'Bing Attribution Text B'], keywords: ['attribution software', 'roi tracking tool'] },
  ] },
  { name: 'Prospecting - Lookalike 1%', platform: 'meta_ads', kind: 'social', weight: 30, cpc: 1.1, ctr: 0.011, adSets: [
    { name: 'LAL Purchasers US', ads: ['Carousel Features', 'Video Testimonial'] },
    { name: 'LAL Signups EU', ads: ['Static Dashboard', 'Reel Demo'] },
  ] },
  { name: 'Retargeting - Site Visitors', platform: 'meta_ads', kind: 'social', weight: 18, cpc: 0.8, ctr: 0.018, adSets: [
    { name: 'Visitors 14d', ads: ['Offer 20% Off', 'Case Study Carousel'] },
  ] },
  { name: 'Instagram Reels - Launch', platform: 'meta_ads', kind: 'social', weight: 12, cpc: 0.95, ctr: 0.009, activeFrom: 0.45, adSets: [
    { name: 'Broad 25-44', ads: ['Reel Launch Teaser', 'Reel UGC Review'] },
  ] },
  { name: 'LinkedIn - Marketing Leaders', platform: 'linkedin_ads', kind: 'social', weight: 9, cpc: 7.5, ctr: 0.006, adSets: [
    { name: 'CMO & VP Marketing', ads: ['Sponsored Content Report', 'Document Ad Playbook'] },
    { name: 'Growth Marketers', ads: ['Sponsored Content Webinar'] },
  ] },
  { name: 'LinkedIn - Demo Offer', platform: 'linkedin_ads', kind: 'social', weight: 5, cpc: 9.2, ctr: 0.005, activeFrom: 0.3, adSets: [
    { name: 'Retarget Website', ads: ['Lead Gen Form Demo'] },
  ] },
  { name: 'TikTok Spark Ads', platform: 'tiktok_ads', kind: 'social', weight: 10, cpc: 0.5, ctr: 0.008, adSets: [
    { name: 'Creators Spark', ads: ['Spark Creator A', 'Spark Creator B'] },
  ] },
  { name: 'TikTok - Creator UGC', platform: 'tiktok_ads', kind: 'social', weight: 6, cpc: 0.6, ctr: 0.007, activeTo: 0.6, adSets: [
    { name: 'Interest Marketing', ads: ['UGC Unboxing', 'UGC Day In Life'] },
  ] },
];

/** The campaigns, with ids derived from their position so they stay stable across runs. */
export function buildCampaigns(brand: string): CampaignDef[] {
  return CAMPAIGN_SEEDS.map((seed, ci) => {
    const base = 9_100_000_000 + ci * 1000;
    return {
      id: String(base),
      name: seed.name,
      slug: slugify(seed.name),
      platform: seed.platform,
      kind: seed.kind,
      weight: seed.weight,
      cpc: seed.cpc,
      ctr: seed.ctr,
      activeFrom: seed.activeFrom ?? 0,
      activeTo: seed.activeTo ?? 1,
      adSets: seed.adSets.map((set, si) => ({
        id: String(base + (si + 1) * 100),
        name: set.name,
        ...(set.keywords ? { keywords: set.keywords.map((k) => k.replace('{brand}', brand.toLowerCase())) } : {}),
        ads: set.ads.map((ad, ai) => ({ id: String(base + (si + 1) * 100 + ai + 1), name: ad, slug: slugify(ad) })),
      })),
    };
  });
}

const GOOGLE = 'https://www.google.com/';

export const CHANNELS: readonly ChannelDef[] = [
  { key: 'direct', weight: 20, returnWeight: 45, conversionLift: 1.3, sources: [{ weight: 1, referrer: null }],
    landings: [['/', 72], ['/pricing', 12], ['/login', 4], ['/blog', 4], ['/product/starter-kit', 4], ['/docs', 4]] },
  { key: 'organic_search', weight: 24, returnWeight: 14, conversionLift: 1.0, sources: [
    { weight: 85, referrer: GOOGLE }, { weight: 8, referrer: 'https://www.bing.com/' },
    { weight: 4, referrer: 'https://duckduckgo.com/' }, { weight: 2, referrer: 'https://www.ecosia.org/' },
    { weight: 1, referrer: 'https://search.yahoo.com/' },
  ], landings: [['/', 25], ['/blog/*', 45], ['/pricing', 6], ['/features/attribution', 8], ['/docs/getting-started', 6], ['/product/*', 10]] },
  { key: 'paid_search', weight: 11, returnWeight: 6, conversionLift: 1.6, sources: [
    { weight: 85, referrer: GOOGLE, utmSource: 'google', utmMedium: 'cpc', clickId: 'gclid', platform: 'google_ads', campaignKind: 'search' },
    { weight: 15, referrer: 'https://www.bing.com/', utmSource: 'bing', utmMedium: 'cpc', clickId: 'msclkid', platform: 'microsoft_ads', campaignKind: 'search' },
  ], landings: [['/', 35], ['/pricing', 25], ['/features/attribution', 20], ['/demo', 10], ['/product/*', 10]] },
  { key: 'organic_social', weight: 7, returnWeight: 4, conversionLift: 0.6, sources: [
    { weight: 30, referrer: 'https://l.facebook.com/' }, { weight: 20, referrer: 'https://l.instagram.com/' },
    { weight: 18, referrer: 'https://www.linkedin.com/' }, { weight: 12, referrer: 'https://t.co/' },
    { weight: 10, referrer: 'https://www.reddit.com/' }, { weight: 10, referrer: 'https://www.youtube.com/' },
  ], landings: [['/', 30], ['/blog/*', 55], ['/product/*', 15]] },
  { key: 'paid_social', weight: 10, returnWeight: 5, conversionLift: 0.9, sources: [
    { weight: 45, referrer: 'https://l.facebook.com/', utmSource: 'facebook', utmMedium: 'paid_social', clickId: 'fbclid', platform: 'meta_ads', campaignKind: 'social' },
    { weight: 25, referrer: 'https://l.instagram.com/', utmSource: 'instagram', utmMedium: 'paid_social', clickId: 'fbclid', platform: 'meta_ads', campaignKind: 'social' },
    { weight: 15, referrer: 'https://www.linkedin.com/', utmSource: 'linkedin', utmMedium: 'paid_social', clickId: 'li_fat_id', platform: 'linkedin_ads', campaignKind: 'social' },
    { weight: 15, referrer: 'https://www.tiktok.com/', utmSource: 'tiktok', utmMedium: 'paid_social', clickId: 'ttclid', platform: 'tiktok_ads', campaignKind: 'social' },
  ], landings: [['/', 30], ['/product/*', 35], ['/pricing', 15], ['/features/dashboards', 10], ['/demo', 10]] },
  { key: 'video', weight: 2, returnWeight: 1, conversionLift: 0.5, sources: [
    { weight: 1, referrer: 'https://www.youtube.com/', utmSource: 'youtube', utmMedium: 'video', clickId: 'gclid', platform: 'google_ads', campaignKind: 'video' },
  ], landings: [['/', 60], ['/features/attribution', 40]] },
  { key: 'email', weight: 5, returnWeight: 12, conversionLift: 1.8, sources: [
    { weight: 80, referrer: null, utmSource: 'newsletter', utmMedium: 'email', ownedCampaigns: ['weekly-digest', 'product-update', 'spring-sale', 'webinar-invite', 'onboarding-day-3'] },
    { weight: 20, referrer: 'https://mail.google.com/', utmSource: 'newsletter', utmMedium: 'email', ownedCampaigns: ['weekly-digest', 'product-update', 'spring-sale'] },
  ], landings: [['/blog/*', 40], ['/pricing', 20], ['/product/*', 25], ['/', 15]] },
  { key: 'affiliate', weight: 3, returnWeight: 1, conversionLift: 1.4, sources: [
    { weight: 50, referrer: 'https://www.martechreviews.example/', utmSource: 'martechreviews', utmMedium: 'affiliate', ownedCampaigns: ['partner-q'] },
    { weight: 30, referrer: 'https://growthstack.example/', utmSource: 'growthstack', utmMedium: 'affiliate', ownedCampaigns: ['partner-q', 'black-friday'] },
    { weight: 20, referrer: null, utmSource: 'podcast-partner', utmMedium: 'affiliate', ownedCampaigns: ['episode-sponsor'] },
  ], landings: [['/', 30], ['/pricing', 40], ['/product/*', 30]] },
  { key: 'display', weight: 3, returnWeight: 3, conversionLift: 0.4, sources: [
    { weight: 1, referrer: null, utmSource: 'google', utmMedium: 'display', clickId: 'gclid', platform: 'google_ads', campaignKind: 'display' },
  ], landings: [['/', 40], ['/product/*', 50], ['/pricing', 10]] },
  { key: 'sms', weight: 1, returnWeight: 2, conversionLift: 1.5, sources: [
    { weight: 1, referrer: null, utmSource: 'sms', utmMedium: 'sms', ownedCampaigns: ['flash-sale', 'cart-reminder'] },
  ], landings: [['/product/*', 60], ['/cart', 40]] },
  { key: 'referral', weight: 11, returnWeight: 3, conversionLift: 1.1, sources: [
    { weight: 25, referrer: 'https://news.ycombinator.com/' }, { weight: 20, referrer: 'https://github.com/' },
    { weight: 15, referrer: 'https://www.producthunt.com/' }, { weight: 12, referrer: 'https://www.g2.com/' },
    { weight: 10, referrer: 'https://www.capterra.com/' }, { weight: 8, referrer: 'https://medium.com/' },
    { weight: 5, referrer: 'https://dev.to/' }, { weight: 5, referrer: 'https://stackoverflow.com/' },
  ], landings: [['/', 45], ['/blog/*', 25], ['/docs/getting-started', 15], ['/pricing', 15]] },
  { key: 'ai_assistant', weight: 3, returnWeight: 1, conversionLift: 1.7, sources: [
    // ChatGPT tags its outbound links with utm_source=chatgpt.com; the others only send a referrer.
    { weight: 55, referrer: 'https://chatgpt.com/', utmSource: 'chatgpt.com' },
    { weight: 25, referrer: 'https://www.perplexity.ai/' }, { weight: 12, referrer: 'https://claude.ai/' },
    { weight: 8, referrer: 'https://gemini.google.com/' },
  ], landings: [['/', 35], ['/pricing', 25], ['/features/attribution', 20], ['/blog/*', 20]] },
];

// ---------- site ----------

export type PageSection = 'home' | 'pricing' | 'features' | 'blog' | 'product' | 'cart' | 'checkout' | 'signup' | 'demo' | 'docs' | 'company' | 'login';

export interface PageDef { path: string; title: string; section: PageSection }

export interface ProductDef { sku: string; name: string; slug: string; price: number; cost: number | null }

/** Store catalogue; prices in workspace currency units. Two products have no known cost, as real stores often lack them. */
export const PRODUCTS: readonly ProductDef[] = [
  { sku: 'SK-STARTER', name: 'Starter Kit', slug: 'starter-kit', price: 49, cost: 18.5 },
  { sku: 'SK-PRO-BUNDLE', name: 'Pro Bundle', slug: 'pro-bundle', price: 199, cost: 71 },
  { sku: 'SK-TEAM-LICENSE', name: 'Team License (annual)', slug: 'team-license', price: 480, cost: 60 },
  { sku: 'SK-WORKSHOP', name: 'Attribution Workshop Seat', slug: 'attribution-workshop', price: 299, cost: null },
  { sku: 'SK-TEMPLATES', name: 'Dashboard Template Pack', slug: 'dashboard-templates', price: 29, cost: 2.4 },
  { sku: 'SK-PIXEL-AUDIT', name: 'Tracking Audit', slug: 'tracking-audit', price: 890, cost: 410 },
  { sku: 'SK-HOODIE', name: 'Sightlines Hoodie', slug: 'hoodie', price: 65, cost: 24 },
  { sku: 'SK-BOOK', name: 'Measuring What Matters (book)', slug: 'measuring-book', price: 24, cost: null },
];

const BLOG_POSTS: ReadonlyArray<readonly [string, string]> = [
  ['first-touch-vs-last-touch', 'First touch vs last touch: which one lies less?'],
  ['utm-naming-conventions', 'UTM naming conventions that survive a reorg'],
  ['why-ad-platforms-overcount', 'Why every ad platform claims the same sale'],
  ['cookieless-attribution-guide', 'A practical guide to cookieless attribution'],
  ['server-side-conversions', 'Sending conversions server-side, step by step'],
  ['roas-vs-mer', 'ROAS vs MER: pick the metric your CFO trusts'],
  ['b2b-pipeline-attribution', 'Attributing pipeline, not just form fills'],
  ['ai-search-traffic', 'Traffic from AI assistants is real, and growing'],
  ['incrementality-on-a-budget', 'Incrementality testing on a small budget'],
  ['dashboard-anti-patterns', 'Seven dashboard anti-patterns'],
];

export interface SiteModel {
  brand: string;
  origin: string;
  pages: readonly PageDef[];
  byPath: ReadonlyMap<string, PageDef>;
  blogPaths: readonly string[];
  productPaths: readonly string[];
}

/** Brand name from the domain: "shop.acme.io" gives "Acme". */
export function brandFromDomain(domain: string): string {
  const labels = domain.toLowerCase().split('.').filter((l) => l && l !== 'www' && l !== 'shop' && l !== 'app');
  const core = labels.length >= 2 ? labels[labels.length - 2]! : labels[0] ?? 'site';
  return core.charAt(0).toUpperCase() + core.slice(1);
}

export function buildSite(domain: string): SiteModel {
  const brand = brandFromDomain(domain);
  const t = (title: string): string => `${title} | ${brand}`;
  const pages: PageDef[] = [
    { path: '/', title: `${brand} - Attribution you can explain`, section: 'home' },
    { path: '/pricing', title: t('Pricing'), section: 'pricing' },
    { path: '/features', title: t('Features'), section: 'features' },
    { path: '/features/attribution', title: t('Multi-touch attribution'), section: 'features' },
    { path: '/features/dashboards', title: t('Dashboards'), section: 'features' },
    { path: '/integrations', title: t('Integrations'), section: 'features' },
    { path: '/customers', title: t('Customer stories'), section: 'company' },
    { path: '/about', title: t('About us'), section: 'company' },
    { path: '/contact', title: t('Contact'), section: 'company' },
    { path: '/blog', title: t('Blog'), section: 'blog' },
    ...BLOG_POSTS.map(([slug, title]) => ({ path: `/blog/${slug}`, title: t(title), section: 'blog' as const })),
    { path: '/shop', title: t('Shop'), section: 'product' },
    ...PRODUCTS.map((p) => ({ path: `/product/${p.slug}`, title: t(p.name), section: 'product' as const })),
    { path: '/cart', title: t('Your cart'), section: 'cart' },
    { path: '/checkout', title: t('Checkout'), section: 'checkout' },
    { path: '/checkout/thank-you', title: t('Thank you for your order'), section: 'checkout' },
    { path: '/signup', title: t('Create your account'), section: 'signup' },
    { path: '/signup/welcome', title: t('Welcome'), section: 'signup' },
    { path: '/demo', title: t('Book a demo'), section: 'demo' },
    { path: '/demo/thanks', title: t('Demo booked'), section: 'demo' },
    { path: '/docs', title: t('Documentation'), section: 'docs' },
    { path: '/docs/getting-started', title: t('Getting started'), section: 'docs' },
    { path: '/docs/server-side-events', title: t('Server-side events'), section: 'docs' },
    { path: '/login', title: t('Log in'), section: 'login' },
    { path: '/app/dashboard', title: t('Dashboard'), section: 'login' },
  ];
  return {
    brand,
    origin: `https://${domain}`,
    pages,
    byPath: new Map(pages.map((p) => [p.path, p])),
    blogPaths: pages.filter((p) => p.path.startsWith('/blog/')).map((p) => p.path),
    productPaths: pages.filter((p) => p.path.startsWith('/product/')).map((p) => p.path),
  };
}

/** Where people go next from each section while browsing (funnels are scripted separately). */
export const NEXT_PAGE: Readonly<Record<PageSection, ReadonlyArray<readonly [string, number]>>> = {
  home: [['/pricing', 30], ['/features', 15], ['/features/attribution', 10], ['/blog', 10], ['/shop', 12], ['/customers', 6], ['/docs', 5], ['/about', 4], ['/product/*', 8]],
  pricing: [['/features', 20], ['/', 15], ['/customers', 15], ['/contact', 10], ['/docs', 10], ['/features/attribution', 15], ['/integrations', 15]],
  features: [['/pricing', 40], ['/features/*', 25], ['/integrations', 15], ['/customers', 10], ['/', 10]],
  blog: [['/blog/*', 50], ['/', 15], ['/pricing', 15], ['/blog', 15], ['/features/attribution', 5]],
  product: [['/product/*', 45], ['/shop', 25], ['/cart', 15], ['/', 15]],
  cart: [['/product/*', 50], ['/shop', 30], ['/', 20]],
  checkout: [['/', 60], ['/shop', 40]],
  signup: [['/app/dashboard', 70], ['/docs/getting-started', 30]],
  demo: [['/', 50], ['/customers', 50]],
  docs: [['/docs/*', 50], ['/pricing', 25], ['/', 25]],
  company: [['/pricing', 35], ['/', 35], ['/blog', 15], ['/customers', 15]],
  login: [['/app/dashboard', 80], ['/docs', 20]],
};

/** Named custom events fired on pages of a section, with the chance per page view. */
export const CUSTOM_EVENTS: Readonly<Partial<Record<PageSection, ReadonlyArray<readonly [string, number]>>>> = {
  home: [['video_play', 0.06], ['cta_click', 0.12]],
  pricing: [['pricing_toggle_annual', 0.25], ['faq_expand', 0.15]],
  features: [['video_play', 0.1], ['tab_switch', 0.2]],
  blog: [['scroll_75', 0.35], ['copy_code', 0.04]],
  product: [['add_to_cart', 0.09], ['image_zoom', 0.15]],
  docs: [['copy_code', 0.2], ['search', 0.1]],
  login: [['report_view', 0.4]],
};

/** External links people click away to, per section (outbound events). */
export const OUTBOUND_LINKS: Readonly<Partial<Record<PageSection, ReadonlyArray<readonly [string, number]>>>> = {
  blog: [['https://github.com/sightline-example/playbooks', 0.03], ['https://www.youtube.com/watch?v=dQw4w9WgXcQ', 0.015]],
  docs: [['https://github.com/sightline-example/sdk', 0.06]],
  company: [['https://www.linkedin.com/company/sightline-example', 0.04]],
  features: [['https://www.g2.com/products/sightline-example/reviews', 0.02]],
};

// ---------- devices ----------

export type DeviceType = 'desktop' | 'mobile' | 'tablet';

export interface BrowserDef {
  device: DeviceType;
  browser: 'Chrome' | 'Safari' | 'Firefox' | 'Edge';
  os: 'Windows' | 'macOS' | 'Linux' | 'iOS' | 'Android';
  weight: number;
  userAgents: readonly string[];
  screens: readonly string[];
}

const CHROME = [126, 127, 128, 129, 130, 131];
const FIREFOX = [127, 128, 129, 130, 131];
const IOS = ['17_5', '17_6', '18_0', '18_1'];
const safariVersion = (ios: string): string => ios.replace('_', '.');

const DESKTOP_SCREENS = ['1920x1080', '1920x1080', '1536x864', '1366x768', '2560x1440', '1440x900', '1280x720', '3840x2160'];
const MAC_SCREENS = ['1440x900', '1512x982', '1728x1117', '1680x1050', '2560x1440'];
const IPHONE_SCREENS = ['390x844', '393x852', '430x932', '375x667', '414x896'];
const ANDROID_SCREENS = ['412x915', '360x800', '384x854', '393x873', '412x892'];
const TABLET_SCREENS = ['820x1180', '810x1080', '1024x1366', '800x1280'];

export const BROWSERS: readonly BrowserDef[] = [
  { device: 'desktop', browser: 'Chrome', os: 'Windows', weight: 24, screens: DESKTOP_SCREENS,
    userAgents: CHROME.map((v) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`) },
  { device: 'desktop', browser: 'Edge', os: 'Windows', weight: 6, screens: DESKTOP_SCREENS,
    userAgents: CHROME.map((v) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36 Edg/${v}.0.0.0`) },
  { device: 'desktop', browser: 'Firefox', os: 'Windows', weight: 3, screens: DESKTOP_SCREENS,
    userAgents: FIREFOX.map((v) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:${v}.0) Gecko/20100101 Firefox/${v}.0`) },
  { device: 'desktop', browser: 'Chrome', os: 'macOS', weight: 8, screens: MAC_SCREENS,
    userAgents: CHROME.map((v) => `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`) },
  { device: 'desktop', browser: 'Safari', os: 'macOS', weight: 7, screens: MAC_SCREENS,
    userAgents: ['17.5', '17.6', '18.0', '18.1'].map((v) => `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${v} Safari/605.1.15`) },
  { device: 'desktop', browser: 'Firefox', os: 'macOS', weight: 1.5, screens: MAC_SCREENS,
    userAgents: FIREFOX.map((v) => `Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:${v}.0) Gecko/20100101 Firefox/${v}.0`) },
  { device: 'desktop', browser: 'Chrome', os: 'Linux', weight: 1.5, screens: DESKTOP_SCREENS,
    userAgents: CHROME.map((v) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`) },
  { device: 'mobile', browser: 'Safari', os: 'iOS', weight: 21, screens: IPHONE_SCREENS,
    userAgents: IOS.map((v) => `Mozilla/5.0 (iPhone; CPU iPhone OS ${v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${safariVersion(v)} Mobile/15E148 Safari/604.1`) },
  { device: 'mobile', browser: 'Chrome', os: 'iOS', weight: 2, screens: IPHONE_SCREENS,
    userAgents: CHROME.map((v, i) => `Mozilla/5.0 (iPhone; CPU iPhone OS ${IOS[i % IOS.length]} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/${v}.0.6723.90 Mobile/15E148 Safari/604.1`) },
  { device: 'mobile', browser: 'Chrome', os: 'Android', weight: 18, screens: ANDROID_SCREENS,
    userAgents: CHROME.map((v) => `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Mobile Safari/537.36`) },
  { device: 'mobile', browser: 'Firefox', os: 'Android', weight: 1, screens: ANDROID_SCREENS,
    userAgents: FIREFOX.map((v) => `Mozilla/5.0 (Android 14; Mobile; rv:${v}.0) Gecko/${v}.0 Firefox/${v}.0`) },
  { device: 'tablet', browser: 'Safari', os: 'iOS', weight: 4, screens: TABLET_SCREENS,
    userAgents: IOS.map((v) => `Mozilla/5.0 (iPad; CPU OS ${v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${safariVersion(v)} Mobile/15E148 Safari/604.1`) },
  { device: 'tablet', browser: 'Chrome', os: 'Android', weight: 2, screens: TABLET_SCREENS,
    userAgents: CHROME.map((v) => `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`) },
];

// ---------- geography ----------

export interface CountryDef {
  code: string;
  weight: number;
  /** Hours ahead of UTC, used to place visits in local daytime. */
  utcOffset: number;
  /**
   * Public IPv4 blocks of large consumer ISPs in that country (as published in the regional
   * registries' allocation records), so geo lookups resolve plausibly. Never private or reserved space.
   */
  ranges: readonly string[];
}

export const COUNTRIES: readonly CountryDef[] = [
  { code: 'US', weight: 42, utcOffset: -5, ranges: ['73.0.0.0/8', '98.192.0.0/10', '67.160.0.0/11'] }, // Comcast
  { code: 'GB', weight: 10, utcOffset: 0, ranges: ['86.128.0.0/10', '81.128.0.0/12'] }, // BT
  { code: 'DE', weight: 9, utcOffset: 1, ranges: ['79.192.0.0/10', '91.0.0.0/10'] }, // Deutsche Telekom
  { code: 'FR', weight: 6, utcOffset: 1, ranges: ['90.0.0.0/9'] }, // Orange
  { code: 'CA', weight: 6, utcOffset: -5, ranges: ['99.224.0.0/11'] }, // Rogers
  { code: 'AU', weight: 4, utcOffset: 10, ranges: ['1.128.0.0/11'] }, // Telstra
  { code: 'NL', weight: 3, utcOffset: 1, ranges: ['77.160.0.0/12'] }, // KPN
  { code: 'ES', weight: 3, utcOffset: 1, ranges: ['83.32.0.0/11'] }, // Telefonica
  { code: 'IT', weight: 3, utcOffset: 1, ranges: ['79.0.0.0/10'] }, // TIM
  { code: 'IN', weight: 7, utcOffset: 5.5, ranges: ['157.32.0.0/12'] }, // Reliance Jio
  { code: 'JP', weight: 3, utcOffset: 9, ranges: ['126.0.0.0/8'] }, // SoftBank
  { code: 'BR', weight: 4, utcOffset: -3, ranges: ['177.0.0.0/14'] },
];

/** A visit's local-hour profile: quiet nights, a working-day peak, an evening shoulder. */
export const HOUR_WEIGHTS: readonly number[] = [
  1.2, 0.8, 0.5, 0.4, 0.4, 0.6, 1.2, 2.4, 3.8, 4.8, 5.4, 5.6, 5.4, 5.5, 5.6, 5.3, 4.9, 4.4, 4.2, 4.4, 4.5, 4.0, 3.0, 2.0,
];

/** Weekday multipliers, Sunday first: weekends are quieter for a B2B-leaning site. */
export const WEEKDAY_WEIGHTS: readonly number[] = [0.62, 1.05, 1.1, 1.08, 1.04, 0.95, 0.66];

// ---------- people ----------

export const FIRST_NAMES: readonly string[] = [
  'olivia', 'liam', 'emma', 'noah', 'ava', 'lucas', 'mia', 'leon', 'sofia', 'mateo', 'hannah', 'elias', 'chloe', 'arjun',
  'yuki', 'amara', 'finn', 'zoe', 'omar', 'ines', 'jonas', 'priya', 'diego', 'lea', 'samuel', 'nora', 'kenji', 'freya', 'hugo', 'maya',
];
export const LAST_NAMES: readonly string[] = [
  'smith', 'garcia', 'muller', 'martin', 'rossi', 'tanaka', 'singh', 'silva', 'brown', 'dubois', 'jansen', 'novak', 'kowalski',
  'nguyen', 'johnson', 'schmidt', 'lopez', 'williams', 'sato', 'patel', 'fischer', 'moreau', 'costa', 'walker', 'berg',
];
/**
 * Every address uses the reserved `.example` top-level domain (RFC 2606), so generated data can
 * never reach a real inbox even if an automation sends to it.
 */
export const EMAIL_DOMAINS: ReadonlyArray<readonly [string, number]> = [
  ['gmail.example', 30], ['outlook.example', 12], ['icloud.example', 8], ['proton.example', 3], ['yahoo.example', 4],
  ['northwind.example', 6], ['contoso.example', 6], ['globex.example', 5], ['initech.example', 4], ['umbrella-retail.example', 4],
  ['hooli.example', 4], ['stark-industries.example', 3], ['wayne-enterprises.example', 3], ['acme-labs.example', 4], ['pied-piper.example', 4],
];

export const CRM_STAGES = [
  'lead', 'mql', 'sql', 'deal_created', 'deal_won', 'deal_lost',
  'trial_started', 'trial_converted', 'subscription_started', 'subscription_churned',
] as const;
export type CrmStage = (typeof CRM_STAGES)[number];

export const CONVERSION_NAMES = ['signup', 'demo_request', 'purchase'] as const;
export type ConversionName = (typeof CONVERSION_NAMES)[number];
