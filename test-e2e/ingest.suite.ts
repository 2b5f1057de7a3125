// Ingest behaviour through the public paths (POST /v1/events via the gateway, tracker hits via
// /collect), written once and run on both driver profiles. A stand-in consumer records what ingest
// publishes, the way downstream services will see it.
import { defineStandIn, partitionOf, type Envelope, type RunningProcess } from '@sightline/kit';
import type { ClassifiedEventV1, ConversionCreatedV1, EventBatchV1 } from '@sightline/proto-schemas';
import { identifySignature } from '@sightline/tracker';
import { adminClient } from './admin-client';
import { startStack, type Stack } from './stack';

export interface DriverProfile {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

export function describeIngest(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`ingest (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let adminBase: string;
    let adminToken: string;
    let key: string;
    let otherKey: string;
    let websiteId: string;
    let workspaceId: string;
    let publicId: string;
    let identifySecret: string;
    const classified: ClassifiedEventV1[] = [];
    const conversions: ConversionCreatedV1[] = [];

    const recorder = defineStandIn({
      name: 'attribution', // stands in for the first downstream consumer of these facts
      needs: {},
      async create() {
        return {
          consumers: {
            'events.classified': async (e: Envelope) => void classified.push(...(e.payload as EventBatchV1).events),
            'conversion.created': async (e: Envelope) => void conversions.push(e.payload as ConversionCreatedV1),
          },
        };
      },
    });

    const waitFor = async <T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const postEvents = async (body: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
    };
    const collect = async (aid: string, events: Record<string, unknown>[], options: { ua?: string; origin?: string; site?: string } = {}) => {
      const r = await fetch(`${base}/collect`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8', origin: options.origin ?? 'https://acme.test', 'user-agent': options.ua ?? CHROME, 'x-forwarded-for': '8.8.8.8' },
        body: JSON.stringify({ site: options.site ?? publicId, aid, events }),
      });
      return r.status;
    };
    let hitSeq = 0;
    const pageview = (url: string, minutesAgo: number, referrer: string | null = null) => ({
      id: `10000000-0000-4000-8000-${String(++hitSeq).padStart(12, '0')}`,
      type: 'pageview',
      name: null,
      ts: Date.now() - minutesAgo * 60_000,
      url,
      referrer,
      title: 'Page',
      screen: '1920x1080',
      props: {},
    });
    const stats = async () => {
      const r = await fetch(`${adminBase}/admin/ingest/websites/${websiteId}/stats`, { headers: { authorization: `Bearer ${adminToken}` } });
      return (await r.json()) as { events: number; rows: number };
    };

    beforeAll(async () => {
      profile = await makeProfile();
      // The test client stands in for a proxy on loopback, so its X-Forwarded-For (the visitor's address) is believed.
      stack = await startStack({ targets: ['gateway', 'ingest'], standIns: [recorder], env: { SIGHTLINE_TRUST_PROXY: 'loopback', ...profile.env } });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      adminBase = `http://127.0.0.1:${proc.adminPort}`;
      adminToken = proc.settings.adminToken;
      const admin = adminClient(adminBase, adminToken);
      const ws = await admin('/workspaces', { name: 'Ingest', plan: 'internal', currency: 'EUR' });
      const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'acme.test' });
      websiteId = String(site['id']);
      workspaceId = String(ws['id']);
      publicId = String(site['public_id']);
      identifySecret = String(site['identify_secret']);
      key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
      otherKey = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    }, 120_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    it('accepts valid events and reports malformed ones by index (partial success)', async () => {
      const { status, body } = await postEvents({
        events: [
          { event_type: 'custom', event_name: 'newsletter_signup', email: 'a@example.com' },
          { event_type: 'custom', email: 'not-an-email' },
          { event_type: 'custom', phone: '12' },
          { event_type: 'custom', occurred_at: new Date(Date.now() + 86_400_000).toISOString(), anonymous_id: 'x' },
          { event_type: 'custom', anonymous_id: 'y', revenue: 'lots' },
        ],
      });
      expect(status).toBe(200);
      expect(body['accepted']).toBe(1);
      expect(body['rejected']).toBe(4);
      expect((body['errors'] as { index: number }[]).map((e) => e.index)).toEqual([1, 2, 3, 4]);
    });

    it('refuses a batch of more than 200 events whole, with a problem document', async () => {
      const { status, body } = await postEvents({ events: Array.from({ length: 201 }, () => ({ event_type: 'custom', anonymous_id: 'z' })) });
      expect(status).toBe(400);
      expect(String(body['type'])).toMatch(/\/invalid-request$/);
    });

    it('stitches a conversion sent with an email to the browsing of its anonymous id', async () => {
      const aid = 'visitor-stitch';
      expect(await collect(aid, [pageview('https://acme.test/?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=g1', 60, 'https://www.google.com/'), pageview('https://acme.test/pricing', 58)])).toBe(202);
      const { body } = await postEvents({ events: [{ event_type: 'purchase', event_name: 'order', email: 'buyer@example.com', anonymous_id: aid, revenue: 120, currency: 'EUR' }] });
      expect(body['accepted']).toBe(1);
      const conversion = await waitFor('the conversion', () => conversions.find((c) => c.email === 'buyer@example.com'));
      expect(conversion.identity_id).toBeTruthy();
      const browsing = await waitFor('the browsing', () => {
        const hits = classified.filter((e) => e.anonymous_id === aid && e.event_type === 'pageview');
        return hits.length === 2 ? hits : undefined;
      });
      expect(browsing.every((e) => e.identity_id === conversion.identity_id)).toBe(true);
      expect(browsing[0]?.session?.channel).toBe('Paid Search');
      expect(browsing[0]?.session_id).toBe(browsing[1]?.session_id);
      expect(browsing[0]?.country).toBe('US');
      expect(browsing[0]?.browser).toBe('Chrome');
    });

    it('merges a second device that identifies with the same email', async () => {
      expect(await collect('phone-device', [pageview('https://acme.test/blog', 30), { ...pageview('https://acme.test/blog', 29), type: 'identify', email: 'Buyer@Example.com', sig: identifySignature({ secret: identifySecret, site: publicId, visitor: 'phone-device', email: 'Buyer@Example.com', expiresAt: new Date(Date.now() + 600_000) }) }], { ua: IPHONE })).toBe(202);
      const phoneHits = await waitFor('the phone hits', () => {
        const hits = classified.filter((e) => e.anonymous_id === 'phone-device');
        return hits.length === 2 ? hits : undefined;
      });
      const buyer = conversions.find((c) => c.email === 'buyer@example.com');
      expect(phoneHits.every((e) => e.identity_id === buyer?.identity_id)).toBe(true);
      expect(phoneHits[0]?.device_type).toBe('mobile');
    });

    it('accepts a conversion with no identity at all, as a conversion without a source', async () => {
      const { body } = await postEvents({ events: [{ event_type: 'conversion', event_name: 'offline_deal', revenue: 50 }] });
      expect(body['accepted']).toBe(1);
      const conversion = await waitFor('the anonymous conversion', () => conversions.find((c) => c.event_name === 'offline_deal'));
      expect(conversion.identity_id).toBeNull();
      expect(conversion.currency).toBe('EUR');
    });

    it('replays an Idempotency-Key: the first result returns and nothing more is written', async () => {
      const body = { events: [{ event_type: 'custom', event_name: 'replayed', anonymous_id: 'idem-visitor' }, { event_type: 'custom', email: 'bad' }] };
      // Earlier tests waited for what they sent to be published, and ingest stores before it publishes.
      const start = await stats();
      const first = await postEvents(body, { 'idempotency-key': 'batch-0001' });
      const accepted = Number(first.body['accepted']);
      expect(accepted).toBeGreaterThan(0);
      // The batch's events go to their visitors' partitions (anonymous id, else email hash or event
      // id), each stored on its own time: wait for all of them, not just the one the test names.
      const before = await waitFor('the whole first batch stored', async () => {
        const s = await stats();
        return s.events === start.events + accepted && classified.some((e) => e.event_name === 'replayed') ? s : undefined;
      });
      const again = await postEvents(body, { 'idempotency-key': 'batch-0001' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      await new Promise((r) => setTimeout(r, 300));
      expect(await stats()).toEqual(before);
      expect(classified.filter((e) => e.event_name === 'replayed')).toHaveLength(1);
      const changed = await postEvents({ events: [{ event_type: 'custom', anonymous_id: 'other' }] }, { 'idempotency-key': 'batch-0001' });
      expect(changed.status).toBe(409);
    });

    it('keeps Idempotency-Key records per API key: another key reusing one makes its own request (finding 6)', async () => {
      const first = await postEvents({ events: [{ event_type: 'custom', event_name: 'per-key-a', anonymous_id: 'per-key' }] }, { 'idempotency-key': 'per-key-0001' });
      expect(first.body['accepted']).toBe(1);
      const other = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${otherKey}`, 'content-type': 'application/json', 'idempotency-key': 'per-key-0001' },
        body: JSON.stringify({ events: [{ event_type: 'custom', event_name: 'per-key-b', anonymous_id: 'per-key' }] }),
      });
      expect(other.status).toBe(200);
      expect(other.headers.get('idempotent-replayed')).toBeNull();
      expect(((await other.json()) as Record<string, unknown>)['accepted']).toBe(1);
      // Both are stored: the second key's event ids are its own, not deduplicated against the first's.
      await waitFor('both events classified', () => (['per-key-a', 'per-key-b'].every((n) => classified.some((e) => e.event_name === n)) ? true : undefined));
    });

    it('drops bots, refuses hits from another origin or an unknown site', async () => {
      const before = classified.length;
      expect(await collect('bot', [pageview('https://acme.test/', 1)], { ua: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' })).toBe(202);
      expect(await collect('evil', [pageview('https://acme.test/', 1)], { origin: 'https://evil.example' })).toBe(403);
      expect(await collect('lost', [pageview('https://acme.test/', 1)], { site: 'site_doesnotexist' })).toBe(404);
      await new Promise((r) => setTimeout(r, 300));
      expect(classified.slice(before).filter((e) => ['bot', 'evil', 'lost'].includes(e.anonymous_id ?? ''))).toEqual([]);
    });

    it('stores every accepted event once, and a redelivered batch adds nothing', async () => {
      const s = await waitFor('all stored', async () => {
        const current = await stats();
        return current.events === new Set(classified.map((e) => e.event_id)).size ? current : undefined;
      });
      expect(s.rows).toBe(s.events);
      // Redeliver the batch that carried the first stored event, as the bus would after a crash.
      const sample = classified[0] as ClassifiedEventV1;
      const batch: EventBatchV1 = {
        batch_id: 'replay-test',
        website: { id: websiteId, domain: 'acme.test', timezone: 'UTC', currency: 'EUR', workspace_id: workspaceId },
        events: [{ ...sample, identity_id: null, session_id: null, session: null }],
      };
      // The intake is partitioned by website and visitor: the redelivery goes where the original went.
      const partition = partitionOf(`${websiteId}:${sample.anonymous_id ?? sample.email_hash ?? sample.phone ?? sample.event_id}`, proc.bus.partitions);
      await proc.bus.publish({ type: 'ingest.batch_received', id: 'replay-test', source: 'test', partition, payload: batch });
      await proc.bus.publish({ type: 'ingest.batch_received', id: 'replay-test', source: 'test', partition, payload: batch });
      await new Promise((r) => setTimeout(r, 500));
      const after = await stats();
      expect(after).toEqual(s); // not even a duplicate row awaiting merge
    });
  });
}
