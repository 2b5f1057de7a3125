// A conversion sent with POST /v1/events, carrying an email and the anonymous id that browsed
// earlier, appears with that browsing as its journey (GET /v1/contacts/{id}/journey); one sent with
// no identity is a conversion without a source. Gateway, ingest and attribution in one process.
import { defineStandIn, type Envelope, type RunningProcess } from '@sightline/kit';
import type { ConversionCreatedV1 } from '@sightline/proto-schemas';
import { OutcomesRepo } from '@sightline/service-attribution';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import { startStack, type Stack } from './stack';


describe('journeys of conversions sent by POST /v1/events (embedded)', () => {
  let proc: RunningProcess;
  let stack: Stack;
  let base: string;
  let key: string;
  let publicId: string;
  const conversions: ConversionCreatedV1[] = [];

  beforeAll(async () => {
    // Stands in for the change feed, to learn the contact ids as a client would from it.
    const feed = defineStandIn({
      name: 'changefeed',
      needs: {},
      async create() {
        return { consumers: { 'conversion.created': async (e: Envelope) => void conversions.push(e.payload as ConversionCreatedV1) } };
      },
    });
    stack = await startStack({ targets: ['gateway', 'ingest', 'attribution', 'contacts'], standIns: [feed] });
    proc = stack.proc;
    base = `http://127.0.0.1:${proc.publicPort}`;
    const admin = adminOf(proc);
    const ws = await admin('/workspaces', { name: 'Journeys', plan: 'internal', timezone: 'Europe/Paris', currency: 'EUR' });
    publicId = String((await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' }))['public_id']);
    key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  }, 60_000);
  const visit = async (aid: string, minutesAgo: number, url: string, referrer: string | null): Promise<void> => {
    expect(await sendVisit(base, publicId, { aid, at: Date.now() - minutesAgo * 60_000, url, referrer, key })).toBe(202);
  };
  const waitForConversion = async (match: (c: ConversionCreatedV1) => boolean) => {
    for (let i = 0; i < 300; i += 1) {
      const found = conversions.find(match);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('conversion never published');
  };
  const journey = async (id: string) => {
    const r = await fetch(`${base}/v1/contacts/${id}/journey`, { headers: { authorization: `Bearer ${key}` } });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  it('shows the browsing of the anonymous id, oldest session first, stitched by email', async () => {
    await visit('browser-1', 180, 'https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=brand&gclid=abc', 'https://www.google.com/');
    await visit('browser-1', 60, 'https://shop.test/?utm_source=newsletter&utm_medium=email&utm_campaign=weekly', null);
    const sent = await fetch(`${base}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: [{ event_type: 'purchase', event_name: 'order', email: 'claire@example.com', anonymous_id: 'browser-1', revenue: 89, currency: 'EUR' }] }),
    });
    expect(((await sent.json()) as { accepted: number }).accepted).toBe(1);
    const conversion = await waitForConversion((c) => c.email === 'claire@example.com');

    let result = await journey(conversion.conversion_id);
    for (let i = 0; i < 100 && (result.body['data'] as unknown[] | undefined)?.length !== 2; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      result = await journey(conversion.conversion_id);
    }
    expect(result.status).toBe(200);
    expect(result.body['synthetic']).toBe(false);
    const sessions = result.body['data'] as { channel: string; campaign: string; landing_page: string; pageviews: number }[];
    expect(sessions.map((s) => s.channel)).toEqual(['Paid Search', 'Email']);
    expect(sessions.map((s) => s.campaign)).toEqual(['brand', 'weekly']);
    expect(sessions.every((s) => s.pageviews === 2)).toBe(true);
    expect((result.body['meta'] as { timezone: string }).timezone).toBe('Europe/Paris');
  }, 60_000);

  it('gives a conversion sent with no identity a synthetic, sourceless journey', async () => {
    await fetch(`${base}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: [{ event_type: 'conversion', event_name: 'phone_order', revenue: 40 }] }),
    });
    const conversion = await waitForConversion((c) => c.event_name === 'phone_order');
    expect(conversion.identity_id).toBeNull();
    let result = await journey(conversion.conversion_id);
    for (let i = 0; i < 100 && result.status === 404; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      result = await journey(conversion.conversion_id);
    }
    expect(result.status).toBe(200);
    expect(result.body['synthetic']).toBe(true);
    expect(result.body['data']).toEqual([]);
  }, 60_000);

  it('carries a sales value written back with PATCH to the attribution service', async () => {
    const conversion = await waitForConversion((c) => c.email === 'claire@example.com');
    let patched = 0;
    for (let i = 0; i < 100 && patched !== 200; i += 1) {
      // The contacts ledger fills from the bus; retry until the row is there.
      const r = await fetch(`${base}/v1/contacts/${conversion.conversion_id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sales_value: 1500, status: 'won' }),
      });
      patched = r.status;
      if (patched !== 200) await new Promise((res) => setTimeout(res, 100));
    }
    expect(patched).toBe(200);
    const outcomes = new OutcomesRepo(await proc.stores.clickhouse('attribution'));
    let outcome = null;
    for (let i = 0; i < 100 && !outcome; i += 1) {
      outcome = await outcomes.latest(conversion.website_id, conversion.conversion_id);
      if (!outcome) await new Promise((res) => setTimeout(res, 100));
    }
    expect(outcome?.sales_value).toBe(1500);
  }, 60_000);

  it('answers 404 for a contact that does not exist', async () => {
    const result = await journey('00000000-0000-4000-8000-000000000000');
    expect(result.status).toBe(404);
    expect(String(result.body['type'])).toMatch(/\/not-found$/);
  });
});
