import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { MAX_EVENTS_PER_BATCH, openApiDocument } from '@sightline/proto-schemas';
import { generateWorkspace, type Workspace } from './generate';
import { CHANNELS, CRM_STAGES } from './model';
import type { CollectBatch, EventsBatch, WorkspaceRecord } from './types';

const END = new Date('2025-06-01T00:00:00Z');
const small = (seed = 42): Workspace => generateWorkspace({ seed, days: 30, visitors: 3000, domain: 'shop.acme.io', endDate: END, siteId: 'site_pub_1' });

function collect<T>(it: Iterable<T>, limit = Infinity): T[] {
  const out: T[] = [];
  for (const x of it) {
    if (out.length >= limit) break;
    out.push(x);
  }
  return out;
}

// One run shared by the shape and realism checks; it is small, so the whole thing fits easily.
const ws = small();
const records: WorkspaceRecord[] = collect(ws.stream());
const collects = records.filter((r): r is CollectBatch => r.kind === 'collect');
const eventBatches = records.filter((r): r is EventsBatch => r.kind === 'events');
const serverEvents = eventBatches.flatMap((b) => b.body.events);
const summary = ws.summary();

describe('determinism', () => {
  it('gives byte-identical output for the same seed and options', () => {
    const a = JSON.stringify(collect(small(42).batches(), 2000));
    const b = JSON.stringify(collect(small(42).batches(), 2000));
    expect(a).toBe(b);
    expect(JSON.stringify(collect(small(42).adSpend()))).toBe(JSON.stringify(collect(small(42).adSpend())));
    expect(JSON.stringify(collect(small(42).contacts()))).toBe(JSON.stringify(collect(small(42).contacts())));
  });

  it('differs for another seed', () => {
    expect(JSON.stringify(collect(small(42).batches(), 200))).not.toBe(JSON.stringify(collect(small(43).batches(), 200)));
  });

  it('replays the same stream from every iterator', () => {
    expect(JSON.stringify(collect(ws.orders()))).toBe(JSON.stringify(records.flatMap((r) => (r.kind === 'order' ? [r.order] : []))));
    expect(collect(ws.milestones()).length).toBe(records.filter((r) => r.kind === 'milestone').length);
  });
});

describe('shape', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const inbound = ajv.compile(openApiDocument.components.schemas['InboundEvent'] as object);
  const collectBody = ajv.compile({
    type: 'object',
    required: ['site', 'aid', 'events'],
    additionalProperties: false,
    properties: {
      site: { const: 'site_pub_1' },
      aid: { type: 'string', format: 'uuid' },
      events: {
        type: 'array', minItems: 1, maxItems: 20,
        items: {
          type: 'object',
          required: ['id', 'type', 'name', 'ts', 'url', 'referrer', 'title', 'screen', 'props'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', format: 'uuid' },
            type: { enum: ['pageview', 'outbound', 'form_submit', 'custom', 'identify'] },
            name: { type: ['string', 'null'] },
            ts: { type: 'integer' },
            url: { type: 'string', pattern: '^https://shop\\.acme\\.io/' },
            referrer: { type: ['string', 'null'], format: 'uri' },
            title: { type: 'string', minLength: 1 },
            screen: { type: 'string', pattern: '^\\d+x\\d+$' },
            props: { type: 'object' },
            email: { type: 'string', format: 'email' },
          },
        },
      },
    },
  });

  it('produces collect bodies the tracker would send, with plausible headers', () => {
    expect(collects.length).toBeGreaterThan(1000);
    // Checked in plain code and asserted once: per-item expect() calls would dominate the run time.
    const bad: unknown[] = [];
    for (const b of collects) {
      if (!collectBody(b.body)) bad.push(collectBody.errors);
      if (b.origin !== 'https://shop.acme.io' || !/^Mozilla\/5\.0 \(/.test(b.userAgent) || !isPublicIpv4(b.ip)) bad.push(b);
      if (b.ts !== b.body.events[b.body.events.length - 1]!.ts) bad.push(b);
      for (const e of b.body.events) if ((e.type === 'identify') !== (e.email !== undefined)) bad.push(e);
    }
    expect(bad).toEqual([]);
  });

  it('produces events batches the API accepts', () => {
    expect(eventBatches.length).toBeGreaterThan(10);
    for (const b of eventBatches) {
      expect(b.body.events.length).toBeGreaterThan(0);
      expect(b.body.events.length).toBeLessThanOrEqual(MAX_EVENTS_PER_BATCH);
      for (const e of b.body.events) {
        if (!inbound(e)) throw new Error(JSON.stringify(inbound.errors));
        expect(new Date(e.occurred_at!).toISOString()).toBe(e.occurred_at);
        if (e.revenue !== undefined) {
          expect(e.revenue).toBeGreaterThan(0);
          expect(e.currency).toBe('USD');
        }
      }
    }
    const purchases = serverEvents.filter((e) => e.event_name === 'purchase');
    expect(purchases.length).toBeGreaterThan(0);
    for (const p of purchases) expect(p.revenue).toBeGreaterThan(0);
  });

  it('keeps everything in time order inside the window', () => {
    let last = 0;
    const bad: WorkspaceRecord[] = [];
    for (const r of records) {
      if (r.ts < last || r.ts < ws.options.start || r.ts >= ws.options.end) bad.push(r);
      last = r.ts;
    }
    expect(bad).toEqual([]);
    expect(ws.options.end).toBe(END.getTime());
  });

  it('keeps each page batch within one page and the browser limit', () => {
    const bad = collects.filter((b) => b.body.events[0]!.type !== 'pageview' || b.body.events.some((e, i, all) => i > 0 && e.ts < all[i - 1]!.ts));
    expect(bad).toEqual([]);
  });

  it('emits orders, milestones, ad spend and contacts with valid fields', () => {
    const orders = records.flatMap((r) => (r.kind === 'order' ? [r.order] : []));
    expect(orders.length).toBeGreaterThan(0);
    for (const o of orders) {
      expect(o.lines.length).toBeGreaterThan(0);
      expect(o.total).toBeCloseTo(o.lines.reduce((s, l) => s + l.quantity * l.unit_price, 0), 2);
      for (const r of o.refunds) expect(r.amount).toBeLessThanOrEqual(o.total);
    }
    expect(orders.some((o) => o.lines.some((l) => l.unit_cost === null))).toBe(true);
    expect(orders.some((o) => o.channel === 'offline')).toBe(true);
    // A web order's purchase event names it.
    const orderIds = new Set(serverEvents.map((e) => e.properties?.['order_id']));
    for (const o of orders) expect(orderIds.has(o.order_id)).toBe(true);

    const milestones = records.flatMap((r) => (r.kind === 'milestone' ? [r.milestone] : []));
    for (const m of milestones) expect(CRM_STAGES).toContain(m.stage);
    expect(new Set(milestones.map((m) => m.stage)).size).toBeGreaterThanOrEqual(6);

    const ads = collect(ws.adSpend());
    expect(new Set(ads.map((a) => a.platform))).toEqual(new Set(['google_ads', 'meta_ads', 'linkedin_ads', 'tiktok_ads', 'microsoft_ads']));
    expect(ads.filter((a) => !/^\d{4}-\d{2}-\d{2}$/.test(a.date) || a.impressions < a.clicks || a.spend < 0 || a.currency !== 'USD')).toEqual([]);
    expect(ads.reduce((sum, a) => sum + a.spend, 0)).toBeGreaterThan(0);
    const contacts = collect(ws.contacts());
    expect(contacts.some((c) => c.predates_tracking)).toBe(true);
    expect(contacts.some((c) => !c.predates_tracking)).toBe(true);
    expect(contacts.every((c) => c.email.endsWith('.example'))).toBe(true);
  });
});

describe('realism', () => {
  it('roughly follows the channel mix on first visits', () => {
    // First page view of each anonymous id, classified by its UTM medium or referrer.
    const seen = new Set<string>();
    const counts = new Map<string, number>();
    for (const b of collects) {
      if (seen.has(b.body.aid)) continue;
      seen.add(b.body.aid);
      const e = b.body.events[0]!;
      const medium = new URL(e.url).searchParams.get('utm_medium');
      const key = medium ?? (e.referrer === null ? 'none' : /google|bing|duckduckgo|ecosia|yahoo/.test(e.referrer) ? 'search' : 'other');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const total = seen.size;
    const weight = (k: string): number => CHANNELS.find((c) => c.key === k)!.weight / CHANNELS.reduce((s, c) => s + c.weight, 0);
    expect((counts.get('cpc') ?? 0) / total).toBeCloseTo(weight('paid_search'), 1);
    expect((counts.get('paid_social') ?? 0) / total).toBeCloseTo(weight('paid_social'), 1);
    expect((counts.get('search') ?? 0) / total).toBeCloseTo(weight('organic_search'), 1);
    expect(counts.get('email') ?? 0).toBeGreaterThan(0);
    // Click ids ride along with paid clicks.
    const paidUrls = collects.map((b) => b.body.events[0]!.url).filter((u) => u.includes('utm_medium=cpc'));
    expect(paidUrls.every((u) => /[?&](gclid|msclkid)=/.test(u))).toBe(true);
  });

  it('has people on two devices who identify on both', () => {
    const emailsByAid = new Map<string, string>();
    for (const b of collects) for (const e of b.body.events) if (e.email) emailsByAid.set(b.body.aid, e.email);
    const aidsByEmail = new Map<string, Set<string>>();
    for (const [aid, email] of emailsByAid) {
      const set = aidsByEmail.get(email) ?? new Set();
      set.add(aid);
      aidsByEmail.set(email, set);
    }
    const multi = [...aidsByEmail.values()].filter((s) => s.size >= 2).length;
    expect(multi).toBeGreaterThan(5);
    const s = summary;
    expect(s.anonymousIds).toBeGreaterThan(s.people);
  });

  it('converts a few percent, with most conversions identified and a few not', () => {
    const s = summary;
    const rate = s.conversions.signup / s.people;
    expect(rate).toBeGreaterThan(0.015);
    expect(rate).toBeLessThan(0.06);
    expect(s.conversions.demo_request).toBeGreaterThan(0);
    expect(s.conversions.demo_request).toBeLessThan(s.conversions.signup);
    expect(s.serverEventsWithoutIdentity).toBeGreaterThan(0);
    const withBoth = serverEvents.filter((e) => e.email && e.anonymous_id).length;
    const emailOnly = serverEvents.filter((e) => e.email && !e.anonymous_id).length;
    expect(withBoth / serverEvents.length).toBeGreaterThan(0.6);
    expect(emailOnly).toBeGreaterThan(0);
  });

  it('brings some people back on later days', () => {
    const days = new Map<string, Set<number>>();
    for (const b of collects) {
      const set = days.get(b.body.aid) ?? new Set();
      set.add(Math.floor(b.ts / 86_400_000));
      days.set(b.body.aid, set);
    }
    const returning = [...days.values()].filter((s) => s.size > 1).length;
    expect(returning / days.size).toBeGreaterThan(0.1);
    expect(returning / days.size).toBeLessThan(0.6);
  });

  it('summary counts match the stream', () => {
    const s = summary;
    expect(s.collectBatches).toBe(collects.length);
    expect(s.collectEvents).toBe(collects.reduce((n, b) => n + b.body.events.length, 0));
    expect(s.serverEvents).toBe(serverEvents.length);
    expect(s.people).toBe(3000);
    expect(s.adSpendRows).toBe(collect(ws.adSpend()).length);
  });
});

describe('sizes', () => {
  it('handles a tiny workspace quickly', () => {
    const started = Date.now();
    const tiny = generateWorkspace({ seed: 1, days: 1, visitors: 10, domain: 'tiny.example.org', endDate: END });
    const s = tiny.summary();
    expect(s.people).toBe(10);
    expect(s.collectEvents).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(generateWorkspace({ seed: 1, days: 3, visitors: 0, domain: 'empty.example.org', endDate: END }).summary().collectEvents).toBe(0);
  });

  it('rejects bad options', () => {
    expect(() => generateWorkspace({ seed: 1, days: 0, visitors: 1, domain: 'a.example' })).toThrow(/days/);
    expect(() => generateWorkspace({ seed: 1, days: 1, visitors: 1, domain: 'not a domain' })).toThrow(/domain/);
    expect(() => generateWorkspace({ seed: 1, days: 1, visitors: 1, domain: 'a.example', currency: 'usd' })).toThrow(/currency/);
  });

  it('defaults the window to end today at 00:00 UTC', () => {
    const w = generateWorkspace({ seed: 1, days: 2, visitors: 1, domain: 'a.example' });
    const now = new Date();
    expect(w.options.end).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  });
});

function isPublicIpv4(ip: string): boolean {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return false;
  const [a, b] = parts as [number, number, number, number];
  if (a === 10 || a === 127 || a === 0 || a >= 224) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  if (a === 169 && b === 254) return false;
  return parts[3] !== 0 && parts[3] !== 255;
}
