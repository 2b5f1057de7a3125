import { createClassifier, type Classifier, type HitContext } from './classify';

const chromeWindows = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('classify: a whole hit', () => {
  let classifier: Classifier;
  beforeAll(async () => {
    classifier = await createClassifier();
  });

  const hit = (over: Partial<HitContext>): HitContext => ({
    url: 'https://www.example.com/pricing?plan=pro',
    referrer: null,
    userAgent: chromeWindows,
    ip: '8.8.8.8',
    siteDomain: 'example.com',
    ...over,
  });

  it('fills every field', () => {
    const got = classifier.classify(
      hit({ url: 'https://www.example.com/pricing?utm_source=Newsletter&utm_medium=Email&utm_campaign=June+Launch', referrer: 'https://mail.google.com/' }),
    );
    expect(got).toEqual({
      bot: false,
      browser: 'Chrome',
      operating_system: 'Windows',
      device_type: 'desktop',
      country: 'US',
      region: expect.any(String),
      city: expect.any(String),
      hostname: 'www.example.com',
      page: '/pricing',
      referrer_domain: 'google.com',
      source: 'newsletter',
      medium: 'email',
      campaign: 'June Launch',
      term: null,
      content: null,
      click_ids: {},
      channel: 'Email',
      channel_rule: 'email',
      campaign_key: expect.stringMatching(/^c1:/),
    });
  });

  it('never returns the IP address', () => {
    const ip = '81.2.69.142';
    const got = classifier.classify(hit({ ip }));
    expect(JSON.stringify(got)).not.toContain(ip);
    expect(got.country).toBe('GB');
  });

  it('flags bots (the ingest service drops them)', () => {
    expect(classifier.classify(hit({ userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' })).bot).toBe(true);
    expect(classifier.classify(hit({ userAgent: 'curl/8.5.0' })).bot).toBe(true);
    expect(classifier.classify(hit({})).bot).toBe(false);
  });

  it('decodes the page path and survives missing or broken URLs', () => {
    expect(classifier.classify(hit({ url: 'https://example.com/caf%C3%A9/%E2%9C%93' })).page).toBe('/café/✓');
    expect(classifier.classify(hit({ url: 'https://example.com/bad%E0%A4%A' })).page).toBe('/bad%E0%A4%A');
    expect(classifier.classify(hit({ url: 'https://example.com' })).page).toBe('/');
    for (const url of [null, 'not a url', '/relative/path']) {
      expect(classifier.classify(hit({ url }))).toMatchObject({ hostname: null, page: null, channel: 'Direct' });
    }
  });

  it('classifies a server-side event from explicit UTM values with no URL, UA or IP', () => {
    const got = classifier.classify({ url: null, referrer: null, userAgent: null, ip: null, siteDomain: 'example.com', utm: { source: 'Hubspot', medium: 'email' } });
    expect(got).toMatchObject({ bot: false, browser: null, device_type: null, country: null, source: 'hubspot', medium: 'email', channel: 'Email' });
  });

  it('reports the rule version and the geo database', () => {
    expect(classifier.rulesVersion).toBe('channel-rules.v1/sources.v1');
    expect(classifier.geoDescription).toMatch(/DB-IP/);
  });
});
