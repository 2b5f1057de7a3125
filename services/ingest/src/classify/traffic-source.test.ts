import builtInSources from './source-categories.v1.json';
import { createTrafficResolver, isInternalHost, normaliseUtmValue, parseReferrer, registrableDomain, type TrafficInput } from './traffic-source';
import { SourceIndex } from './source-index';
import type { SourceCategoriesFile } from './rule-types';

const sources = new SourceIndex(builtInSources as SourceCategoriesFile);
const site = 'example.com';
const resolver = createTrafficResolver(sources, { hostCacheSize: 4 });
const resolve = (url: string | null, referrer: string | null = null, utm?: TrafficInput['utm']) =>
  resolver({ url: url ? new URL(url) : null, referrer, siteDomain: site, utm });

describe('UTM parameters', () => {
  it('trims every value and lower-cases source and medium only', () => {
    const t = resolve('https://example.com/?utm_source=%20Google%20&utm_medium=CPC&utm_campaign=%20Spring_Sale%20&utm_term=Red+Shoes&utm_content=Ad-A');
    expect(t).toMatchObject({ source: 'google', medium: 'cpc', campaign: 'Spring_Sale', term: 'Red Shoes', content: 'Ad-A' });
  });

  it('treats empty values as absent', () => {
    expect(resolve('https://example.com/?utm_source=&utm_medium=%20')).toMatchObject({ source: '(direct)', medium: '(none)', campaign: null });
    expect(normaliseUtmValue('campaign', '   ')).toBeUndefined();
  });

  it('caps very long values', () => {
    expect(normaliseUtmValue('campaign', 'x'.repeat(2000))).toHaveLength(500);
  });

  it('marks a missing half of source/medium as (not set)', () => {
    expect(resolve('https://example.com/?utm_source=newsletter')).toMatchObject({ source: 'newsletter', medium: '(not set)' });
    expect(resolve('https://example.com/?utm_medium=email')).toMatchObject({ source: '(not set)', medium: 'email' });
  });

  it('beats the referrer', () => {
    expect(resolve('https://example.com/?utm_source=spring&utm_medium=email', 'https://www.google.com/')).toMatchObject({
      source: 'spring',
      medium: 'email',
      referrer_domain: 'google.com',
    });
  });

  it('lets explicit values (server events) beat the URL field by field', () => {
    const t = resolve('https://example.com/?utm_source=web&utm_medium=link&utm_campaign=a', null, { source: ' CRM ', campaign: 'b' });
    expect(t).toMatchObject({ source: 'crm', medium: 'link', campaign: 'b' });
  });

  it('keeps the campaign of a referral or direct visit when only utm_campaign is given', () => {
    expect(resolve('https://example.com/?utm_campaign=launch')).toMatchObject({ source: '(direct)', medium: '(none)', campaign: 'launch' });
  });
});

describe('inference without UTM', () => {
  it('no referrer and no parameters is (direct) / (none)', () => {
    expect(resolve('https://example.com/')).toMatchObject({ source: '(direct)', medium: '(none)', referrer_domain: null, sourceCategory: null });
    expect(resolve(null)).toMatchObject({ source: '(direct)', medium: '(none)' });
  });

  it('a Google click id means google / cpc, and beats UTM source and medium as GA4 auto-tagging does', () => {
    for (const id of ['gclid', 'gbraid', 'wbraid']) {
      expect(resolve(`https://example.com/?${id}=abc`)).toMatchObject({ source: 'google', medium: 'cpc', click_ids: { [id]: 'abc' } });
    }
    expect(resolve('https://example.com/?gclid=abc&utm_source=adwords&utm_medium=ppc&utm_campaign=brand')).toMatchObject({
      source: 'google',
      medium: 'cpc',
      campaign: 'brand',
    });
  });

  it('explicit server-event values still beat a Google click id', () => {
    expect(resolve('https://example.com/?gclid=abc', null, { source: 'partner', medium: 'referral' })).toMatchObject({ source: 'partner', medium: 'referral' });
  });

  it('other ad click ids imply their network and cpc, but UTM wins over them', () => {
    expect(resolve('https://example.com/?msclkid=m1')).toMatchObject({ source: 'bing', medium: 'cpc', sourceCategory: 'search' });
    expect(resolve('https://example.com/?ttclid=t1')).toMatchObject({ source: 'tiktok', medium: 'cpc', sourceCategory: 'social' });
    expect(resolve('https://example.com/?li_fat_id=l1')).toMatchObject({ source: 'linkedin', medium: 'cpc' });
    expect(resolve('https://example.com/?msclkid=m1&utm_source=bing&utm_medium=paidsearch')).toMatchObject({ source: 'bing', medium: 'paidsearch' });
  });

  it('a bare fbclid is organic Facebook (it is added to organic links too), unless a referrer says more', () => {
    expect(resolve('https://example.com/?fbclid=IwAR')).toMatchObject({ source: 'facebook', medium: 'social', click_ids: { fbclid: 'IwAR' } });
    expect(resolve('https://example.com/?fbclid=IwAR', 'https://l.instagram.com/')).toMatchObject({ source: 'instagram', medium: 'social' });
  });

  it('a search engine referrer is organic under its clean name', () => {
    expect(resolve('https://example.com/', 'https://www.google.de/')).toMatchObject({ source: 'google', medium: 'organic', sourceCategory: 'search', referrer_domain: 'google.de' });
    expect(resolve('https://example.com/', 'https://www.bing.com/search?q=x')).toMatchObject({ source: 'bing', medium: 'organic' });
    expect(resolve('https://example.com/', 'https://uk.search.yahoo.com/')).toMatchObject({ source: 'yahoo', medium: 'organic' });
  });

  it('a Google product that is not search is a plain referral', () => {
    expect(resolve('https://example.com/', 'https://docs.google.com/x')).toMatchObject({ source: 'docs.google.com', medium: 'referral', sourceCategory: null });
  });

  it('the most specific listed domain wins (gemini.google.com is an AI assistant, mail.google.com is email)', () => {
    expect(resolve('https://example.com/', 'https://gemini.google.com/app')).toMatchObject({ source: 'gemini.google.com', sourceCategory: 'ai_assistant' });
    expect(resolve('https://example.com/', 'https://mail.google.com/')).toMatchObject({ source: 'gmail', medium: 'email' });
  });

  it('an unknown referrer is a referral named by its host, without www', () => {
    expect(resolve('https://example.com/', 'https://www.some-blog.net/post/1')).toMatchObject({ source: 'some-blog.net', medium: 'referral', referrer_domain: 'some-blog.net' });
  });

  it('reads Android app referrers by package name', () => {
    expect(resolve('https://example.com/', 'android-app://com.google.android.gm/')).toMatchObject({ source: 'gmail', medium: 'email', referrer_domain: 'com.google.android.gm' });
    expect(resolve('https://example.com/', 'android-app://org.unknown.app/')).toMatchObject({ source: 'org.unknown.app', medium: 'referral' });
  });

  it('ignores referrers that are not web pages or cannot be parsed', () => {
    for (const referrer of ['about:blank', 'chrome-extension://abc/', 'not a url', '']) {
      expect(resolve('https://example.com/', referrer)).toMatchObject({ source: '(direct)', referrer_domain: null });
    }
  });

  it('recognises utm_source values that name a known source by alias or domain', () => {
    expect(resolve('https://example.com/?utm_source=fb&utm_medium=paid')).toMatchObject({ sourceCategory: 'social' });
    expect(resolve('https://example.com/?utm_source=www.perplexity.ai')).toMatchObject({ sourceCategory: 'ai_assistant' });
    expect(resolve('https://example.com/?utm_source=unknown-thing')).toMatchObject({ sourceCategory: null });
  });
});

describe('internal referrers', () => {
  it('treats the site, its subdomains and its sibling hosts as internal', () => {
    expect(isInternalHost('example.com', 'example.com')).toBe(true);
    expect(isInternalHost('blog.example.com', 'example.com')).toBe(true);
    expect(isInternalHost('example.com', 'www.example.com')).toBe(true);
    expect(isInternalHost('shop.example.com', 'www.example.com')).toBe(true);
    expect(isInternalHost('www.example.com', 'https://Example.com/')).toBe(true);
  });

  it('does not treat look-alikes or other sites as internal', () => {
    expect(isInternalHost('notexample.com', 'example.com')).toBe(false);
    expect(isInternalHost('example.com.evil.io', 'example.com')).toBe(false);
    expect(isInternalHost('example.org', 'example.com')).toBe(false);
  });

  it('respects private suffixes: two github.io sites are different sites', () => {
    expect(isInternalHost('alice.github.io', 'bob.github.io')).toBe(false);
    expect(registrableDomain('docs.alice.github.io')).toBe('alice.github.io');
  });

  it('an internal referrer gives no referrer domain and no source', () => {
    expect(resolve('https://example.com/b', 'https://example.com/a')).toMatchObject({ source: '(direct)', referrer_domain: null });
    expect(resolve('https://example.com/b', 'https://www.example.com/pricing')).toMatchObject({ source: '(direct)', referrer_domain: null });
  });

  it('judges the same referrer host per site (the memo is keyed by both)', () => {
    const asSeenFrom = (siteDomain: string) => resolver({ url: null, referrer: 'https://blog.acme.io/x', siteDomain }).referrer_domain;
    expect(asSeenFrom('acme.io')).toBeNull();
    expect(asSeenFrom('example.com')).toBe('acme.io');
  });

  it('reduces an external referrer to its registrable domain', () => {
    expect(resolve(null, 'https://news.bbc.co.uk/story').referrer_domain).toBe('bbc.co.uk');
    expect(resolve(null, 'http://203.0.113.9:8080/x').referrer_domain).toBe('203.0.113.9');
    expect(parseReferrer('HTTPS://User@Blog.Example.ORG./a')).toEqual({ host: 'blog.example.org', appPackage: false });
  });
});

describe('campaign key', () => {
  it('is empty when the hit carries no campaign parameters, even from a referrer', () => {
    expect(resolve('https://example.com/').campaign_key).toBe('');
    expect(resolve('https://example.com/', 'https://www.google.com/').campaign_key).toBe('');
  });

  it('is stable for the same parameters whatever the page or parameter order', () => {
    const a = resolve('https://example.com/a?utm_source=x&utm_medium=email&utm_campaign=c').campaign_key;
    const b = resolve('https://example.com/b?utm_campaign=c&utm_medium=EMAIL&utm_source=x&other=1').campaign_key;
    expect(a).toMatch(/^c1:[0-9a-f]{16}$/);
    expect(b).toBe(a);
  });

  it('changes when any campaign parameter or click id changes', () => {
    const base = resolve('https://example.com/?utm_source=x&utm_medium=email&utm_campaign=c').campaign_key;
    expect(resolve('https://example.com/?utm_source=x&utm_medium=email&utm_campaign=d').campaign_key).not.toBe(base);
    expect(resolve('https://example.com/?utm_source=x&utm_medium=email&utm_campaign=c&utm_content=b').campaign_key).not.toBe(base);
    expect(resolve('https://example.com/?gclid=1').campaign_key).not.toBe(resolve('https://example.com/?gclid=2').campaign_key);
  });
});
