// Derived touch attributes stored with every event and session: whether the traffic was paid, and
// which ad platform it came from. Decided once at insert so every read agrees.

const PAID_MEDIUM = /^(cpc|ppc|cpm|cpv|cpa|cpp|paid([-_ ]?[a-z]+)?|display|banner|retargeting|remarketing)$/i;
const PAID_CHANNELS: ReadonlySet<string> = new Set(['Paid Search', 'Paid Social', 'Paid Shopping', 'Paid Video', 'Paid Other', 'Display', 'Cross-network']);

/** Click ids only an ad click sets. fbclid is absent on purpose: Meta adds it to organic links too. */
const AD_CLICK_IDS: Readonly<Record<string, string>> = {
  gclid: 'google_ads', gbraid: 'google_ads', wbraid: 'google_ads', dclid: 'google_ads',
  msclkid: 'microsoft_ads', ttclid: 'tiktok_ads', li_fat_id: 'linkedin_ads', twclid: 'x_ads',
};

/** Platform of paid traffic by its source, when no ad click id names it. */
const PLATFORM_BY_SOURCE: readonly [RegExp, string][] = [
  [/(^|\.)(google|youtube)(\.|$)|^adwords$/i, 'google_ads'],
  [/(^|\.)(facebook|instagram|fb|ig|meta|messenger)(\.|$)/i, 'meta_ads'],
  [/(^|\.)(bing|microsoft|msn)(\.|$)/i, 'microsoft_ads'],
  [/(^|\.)linkedin(\.|$)|^lnkd\.in$/i, 'linkedin_ads'],
  [/(^|\.)tiktok(\.|$)/i, 'tiktok_ads'],
  [/(^|\.)(twitter|x)(\.|$)|^t\.co$/i, 'x_ads'],
];

export interface TouchSource {
  channel: string;
  source: string | null;
  medium: string | null;
  click_ids: Record<string, string>;
}

export function isPaid(t: TouchSource): boolean {
  if (t.medium && PAID_MEDIUM.test(t.medium)) return true;
  if (PAID_CHANNELS.has(t.channel)) return true;
  return Object.keys(t.click_ids).some((k) => k in AD_CLICK_IDS);
}

/** The ad platform of a paid touch ('' for unpaid traffic or an unknown platform). */
export function adPlatform(t: TouchSource): string {
  for (const key of Object.keys(t.click_ids)) {
    const platform = AD_CLICK_IDS[key];
    if (platform) return platform;
  }
  if (!isPaid(t)) return '';
  if ('fbclid' in t.click_ids) return 'meta_ads';
  const source = t.source ?? '';
  for (const [pattern, platform] of PLATFORM_BY_SOURCE) if (pattern.test(source)) return platform;
  return '';
}
