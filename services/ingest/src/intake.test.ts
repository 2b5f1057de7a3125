// Intake: nothing accepted may fail later for its content (issue 16, findings 3 and 4). Each event
// and tracker hit is checked on its own; a bad one is rejected with its index, the rest accepted.
import { randomUUID } from 'node:crypto';
import { messageValidator } from '@sightline/proto-schemas';
import { createClassifier, type Classifier } from './classify/classify';
import { clip, intakeApiEvents, intakeTrackerHits, onWebsite } from './intake';

const WEBSITE = { id: randomUUID(), domain: 'shop.test', timezone: 'UTC', currency: 'EUR', workspace_id: randomUUID() };
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('intake', () => {
  let classifier: Classifier;
  beforeAll(async () => {
    classifier = await createClassifier();
  });
  const api = (events: unknown[]) => intakeApiEvents({ events, website: WEBSITE, classifier, idempotencyKey: null, receivedAt: new Date() });
  const tracker = (events: unknown[], aid: unknown = 'visitor') =>
    intakeTrackerHits({ body: { site: 'site_x', aid, events }, website: WEBSITE, ip: null, userAgent: CHROME, classifier, receivedAt: new Date() });
  const hit = (over: Record<string, unknown> = {}) => ({ id: randomUUID(), type: 'pageview', name: null, ts: Date.now(), url: 'https://shop.test/', referrer: null, title: 'Shop', screen: '1x1', props: {}, ...over });

  it('rejects by index an event a store would refuse, and accepts the rest', () => {
    const result = api([
      { anonymous_id: 'ok' },
      { anonymous_id: 'a\u0000b' },
      { anonymous_id: 'ok', properties: { note: 'half \ud83d pair' } },
      { anonymous_id: 'ok', properties: { ['k\u0000']: 1 } },
      { anonymous_id: 'ok', event_type: '' },
      { anonymous_id: 'ok', event_name: '' },
      { anonymous_id: '' },
      { anonymous_id: 'ok', occurred_at: '2016-12-31T23:59:60Z' },
      { anonymous_id: 'ok', occurred_at: '0000-01-01T00:00:00Z' },
      { anonymous_id: 'ok', occurred_at: '1999-12-31T23:59:59.999Z' },
      { anonymous_id: 'ok', occurred_at: '2000-01-01T00:00:00Z' },
      { anonymous_id: 'ok', properties: JSON.parse(`${'{"a":'.repeat(15)}1${'}'.repeat(15)}`) as object },
      { anonymous_id: 'ok', properties: JSON.parse(`${'{"a":'.repeat(16)}1${'}'.repeat(16)}`) as object },
    ]);
    expect(result.errors.map((e) => e.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 12]);
    expect(result.events).toHaveLength(3);
    expect(result.events.map((e) => e.occurred_at)).toContain('2000-01-01T00:00:00.000Z');
    expect(result.errors.find((e) => e.index === 1)?.detail).toMatch(/anonymous_id contains a NUL/);
  });

  it('accepts only events their message schema takes: every accepted one publishes', () => {
    const result = api(Array.from({ length: 50 }, (_, i) => ({ event_type: i % 2 ? 'purchase' : 'custom', anonymous_id: `v${i}`, revenue: i, properties: { url: `https://shop.test/${i}` } })));
    const envelope = (events: unknown[]) => ({
      id: randomUUID(), type: 'ingest.batch_received', version: 1, occurred_at: new Date().toISOString(), workspace_id: WEBSITE.workspace_id, website_id: WEBSITE.id, source: 'test',
      payload: { batch_id: 'b', website: WEBSITE, events },
    });
    expect(messageValidator.validateEnvelope(envelope(result.events))).toBeNull();
  });

  it('rejects tracker hits a store would refuse, or for another host, and takes the others', () => {
    const result = tracker([
      hit(),
      hit({ url: 'https://www.shop.test/pricing' }),
      hit({ url: 'https://shop.test/a\u0000b' }),
      hit({ title: 'x\ud800' }),
      hit({ url: 'https://shop.test.evil.example/' }),
      hit({ url: 'https://attacker.example/?utm_campaign=shop.test' }),
      hit({ url: 'javascript:alert(1)//shop.test' }),
      hit({ ts: Date.UTC(1999, 11, 31) }),
      hit({ props: { ['p\u0000']: 1 } }),
    ]);
    expect(result).toMatchObject({ rejected: 7, bot: false });
    expect(result.events.map((e) => e.url)).toEqual(['https://shop.test/', 'https://www.shop.test/pricing']);
  });

  it('rejects a whole tracker batch whose anonymous id holds a NUL', () => {
    expect(tracker([hit(), hit()], 'a\u0000b')).toMatchObject({ events: [], rejected: 2 });
  });

  it('cuts text without splitting a surrogate pair', () => {
    const title = `${'x'.repeat(499)}😀tail`;
    const result = tracker([hit({ title })]);
    expect(result.events[0]?.title).toBe('x'.repeat(499));
    expect(clip(`ab😀`, 3)).toBe('ab');
    expect(clip(`ab😀`, 4)).toBe('ab😀');
    expect(clip('abc', 3)).toBe('abc');
  });

  it('knows the website and its subdomains from other hosts', () => {
    expect(onWebsite('https://shop.test/x', 'shop.test')).toBe(true);
    expect(onWebsite('http://a.b.shop.test/', 'shop.test')).toBe(true);
    expect(onWebsite('https://SHOP.TEST./', 'shop.test')).toBe(true);
    expect(onWebsite('https://myshop.test/', 'shop.test')).toBe(false);
    expect(onWebsite('ftp://shop.test/', 'shop.test')).toBe(false);
    expect(onWebsite('not a url', 'shop.test')).toBe(false);
  });
});
