// CRM stage outcomes back to the ad platforms, end to end: a visitor arrives from a Google click,
// a Meta ad and a LinkedIn ad (visits with gclid / fbclid / li_fat_id) and later converts with an
// email, the conversion itself carrying no click id: crm-sync finds the clicks of those earlier
// visits through attribution (attribution.getAdClicks) when it plans the uploads; the CRM (the HubSpot
// stand-in) holds a deal with that person, crm-sync syncs it, and the deal is moved to Closed Won in
// HubSpot. crm-sync's mirror publishes milestone.reached deal_won (with the deal's contact emails),
// contacts turns it into outcome.writeback_requested for the person's conversion (crm:hubspot,
// carrying the milestone), and crm-sync's planner queues one upload per connected ad account whose
// send rule names deal_won: Google's Data Manager API, Meta CAPI and LinkedIn's Conversions API
// stand-ins each receive the event once, hashed as documented, valued at the deal amount. A contact
// whose consent for ad personalisation is denied is sent to none. Written once, run on both profiles;
// the kill -9 of a crm-sync process mid-push is in ad-conversions.int.test.ts (helpers below).
import { createHash, randomUUID } from 'node:crypto';
import type { RunningProcess } from '@sightline/kit';
import { startAdPlatformsServer, type AdPlatformsServer } from '../services/crm-sync/test/ad-platforms-server';
import { startDataManagerServer, type DataManagerServer } from '../services/crm-sync/test/google-data-manager-server';
import { FakeHubspot } from '../services/crm-sync/test/hubspot-server';
import { startLinkedinConversionsServer, type LinkedinConversionsServer } from '../services/crm-sync/test/linkedin-conversions-server';
import { adminOf } from './admin-client';
import { crmAdmin, holdingProxy, type CrmAdmin, type HoldingProxy } from './crm-e2e';
import { sendVisit } from './collect-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;

const MINUTE = 60_000;
export const AD_CONVERSION_SERVICES = ['gateway', 'ingest', 'attribution', 'contacts', 'crm-sync'];
export const DEAL_WON_RULES = [{ outcome: 'stage', stage: 'deal_won', value: 'sales_value' }];
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The three conversion stand-ins and the CRM, each behind a proxy that can hold answers. */
export interface AdStandIns {
  hubspot: FakeHubspot;
  google: DataManagerServer;
  meta: AdPlatformsServer;
  linkedin: LinkedinConversionsServer;
  proxies: { google: HoldingProxy; meta: HoldingProxy; linkedin: HoldingProxy };
  /** crm-sync settings pointing at them. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startAdStandIns(): Promise<AdStandIns> {
  const hubspot = new FakeHubspot();
  await hubspot.start();
  hubspot.addPipeline({
    id: 'default',
    label: 'Sales Pipeline',
    stages: [
      { id: 'appointmentscheduled', label: 'Appointment Scheduled', isClosed: false, probability: 0.2 },
      { id: 'closedwon', label: 'Closed Won', isClosed: true, probability: 1 },
      { id: 'closedlost', label: 'Closed Lost', isClosed: true, probability: 0 },
    ],
  });
  const google = await startDataManagerServer({ accessTokens: ['google-token'], accounts: ['1234567890'], conversionActions: ['42'] });
  const meta = await startAdPlatformsServer({ metaAccessToken: 'meta-token' });
  const linkedin = await startLinkedinConversionsServer({ accessToken: 'linkedin-token', conversionRules: ['104012'] });
  // The uploads are POSTs: those are the answers held.
  const hold = (url: string): Promise<HoldingProxy> => holdingProxy(url, undefined, ['POST']);
  const proxies = { google: await hold(google.url), meta: await hold(meta.url), linkedin: await hold(linkedin.url) };
  return {
    hubspot, google, meta, linkedin, proxies,
    env: {
      SIGHTLINE_CREDENTIALS_KEY: 'ad-conversions-e2e-credentials-key',
      SIGHTLINE_HUBSPOT_URL: hubspot.url,
      SIGHTLINE_GOOGLE_DATA_MANAGER_URL: proxies.google.url,
      SIGHTLINE_META_ADS_URL: proxies.meta.url,
      SIGHTLINE_LINKEDIN_ADS_URL: proxies.linkedin.url,
      // Never fire during a test: syncs start through the admin API.
      SIGHTLINE_CRM_SYNC_CRON: '0 0 1 1 *',
      SIGHTLINE_AD_SPEND_PULL_CRON: '0 0 1 1 *',
    },
    close: async () => {
      await Promise.all(Object.values(proxies).map((p) => p.close()));
      await Promise.all([hubspot.close(), google.close(), meta.close(), linkedin.close()]);
    },
  };
}

export const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

export { crmAdmin };
type Admin = CrmAdmin;

/** Connects Google (Data Manager API), Meta and LinkedIn with a deal_won rule, and HubSpot. Returns the connection id. */
export async function connectAll(admin: Admin, website: { id: string; workspace_id: string }, hubspot: FakeHubspot): Promise<string> {
  const accounts: [string, Json, Json][] = [
    ['google_ads', { access_token: 'google-token' }, { customer_id: '123-456-7890', conversion_action_id: '42', send: DEAL_WON_RULES }],
    ['meta_ads', { access_token: 'meta-token' }, { pixel_id: '777', send: DEAL_WON_RULES }],
    ['linkedin_ads', { access_token: 'linkedin-token' }, { conversion_rule_id: '104012', send: DEAL_WON_RULES }],
  ];
  for (const [platform, credentials, settings] of accounts) {
    const r = await admin('PUT', `/crm/ad-destinations/${website.id}/${platform}`, { workspace_id: website.workspace_id, credentials, settings });
    expect({ platform, status: r.status }).toEqual({ platform, status: 200 });
  }
  const created = await admin('POST', '/crm/connections', { website_id: website.id, workspace_id: website.workspace_id, provider: 'hubspot', credentials: { access_token: hubspot.token } });
  expect(created.status).toBe(201);
  return String(created.body['id']);
}

/** Starts a sync and waits until the connection reports it finished. */
export async function syncAndWait(admin: Admin, id: string): Promise<void> {
  const before = (await admin('GET', `/crm/connections/${id}`)).body;
  const started = await admin('POST', `/crm/connections/${id}/sync`);
  expect(started.status).toBe(202);
  await waitFor('the sync to finish', async () => {
    const now = (await admin('GET', `/crm/connections/${id}`)).body;
    const finished = !now['sync_in_progress'] && (now['last_success_at'] !== before['last_success_at'] || now['last_error_at'] !== before['last_error_at']);
    if (finished && now['last_error_at'] !== before['last_error_at']) throw new Error(`sync failed: ${JSON.stringify(now)}`);
    return finished ? true : undefined;
  });
}

export interface Person {
  email: string;
  conversionId: string;
  gclid: string;
  fbclid: string;
  liFatId: string;
  /** When the visit from the Meta ad began (ms): the time Meta's fbc must carry. */
  metaClickAt: number;
}

/**
 * A visitor from a Google click, a Meta ad and a LinkedIn ad who converts with an email later; the
 * click ids are on the visits only (the conversion carries `ad_consent` when given). Returns once
 * contacts has the conversion and attribution has the three visits with their click ids.
 */
export async function arriveAndConvert(base: string, publicId: string, key: string, name: string, consent: 'granted' | 'denied' | null): Promise<Person> {
  const aid = randomUUID();
  const tag = randomUUID().slice(0, 8);
  const now = Date.now();
  const person = { email: `${name}@acme.test`, conversionId: '', gclid: `gclid-${tag}`, fbclid: `IwAR-${tag}`, liFatId: `li-${tag}`, metaClickAt: now - 40 * MINUTE };
  const visits: [string, string, number][] = [
    [`https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=launch&gclid=${person.gclid}`, 'https://www.google.com/', 50],
    [`https://shop.test/?utm_source=facebook&utm_medium=paid_social&utm_campaign=launch&fbclid=${person.fbclid}`, 'https://l.facebook.com/', (now - person.metaClickAt) / MINUTE],
    [`https://shop.test/?utm_source=linkedin&utm_medium=paid_social&utm_campaign=launch&li_fat_id=${person.liFatId}`, 'https://www.linkedin.com/', 30],
  ];
  for (const [url, referrer, minutesAgo] of visits) expect(await sendVisit(base, publicId, { aid, at: now - minutesAgo * MINUTE, url, referrer, key })).toBe(202);
  const properties: Json = {};
  if (consent !== null) properties['ad_consent'] = consent;
  const r = await fetch(`${base}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [{ event_type: 'conversion', event_name: 'demo_request', anonymous_id: aid, email: person.email, occurred_at: new Date(now - 20 * MINUTE).toISOString(), properties }] }),
  });
  expect(((await r.json()) as Json)['accepted']).toBe(1);
  // The conversion as contacts filed it (the deal reaches it by email).
  const window = `from=${encodeURIComponent(new Date(now - 60 * MINUTE).toISOString())}&to=${encodeURIComponent(new Date(now + 60 * MINUTE).toISOString())}`;
  person.conversionId = await waitFor(`${person.email} in contacts`, async () => {
    const listed = await fetch(`${base}/v1/contacts?email=${encodeURIComponent(person.email)}&${window}`, { headers: { authorization: `Bearer ${key}` } });
    if (listed.status !== 200) return undefined;
    const id = ((await listed.json()) as { data: Json[] }).data[0]?.['id'];
    return typeof id === 'string' ? id : undefined;
  });
  // The person's visits, with their click ids, as attribution holds them (what crm-sync will ask for).
  await waitFor(`${person.email}'s visits in attribution`, async () => {
    const journey = await fetch(`${base}/v1/contacts/${person.conversionId}/journey`, { headers: { authorization: `Bearer ${key}` } });
    if (journey.status !== 200) return undefined;
    const sessions = ((await journey.json()) as { data: { click_ids?: Record<string, string> }[] }).data;
    const held = Object.assign({}, ...sessions.map((session) => session.click_ids ?? {})) as Record<string, string>;
    return held['gclid'] === person.gclid && held['fbclid'] === person.fbclid && held['li_fat_id'] === person.liFatId ? true : undefined;
  });
  return person;
}

/** The person's CRM contact and an open deal worth `amount` USD; returns the deal id. */
export function crmDealFor(hubspot: FakeHubspot, person: Person, amount: number): string {
  const contact = hubspot.upsert('contacts', { email: person.email, lifecyclestage: 'opportunity' });
  const deal = hubspot.upsert('deals', { dealname: `Deal ${person.email}`, amount: String(amount), deal_currency_code: 'USD', pipeline: 'default', dealstage: 'appointmentscheduled', closedate: null });
  hubspot.associateDeal(deal, { contactIds: [contact] });
  return deal;
}

export const winDeal = (hubspot: FakeHubspot, dealId: string): void => {
  hubspot.upsert('deals', { dealstage: 'closedwon', closedate: new Date().toISOString() }, dealId);
};

/** What each platform accepted for one conversion (each stand-in keeps the first copy per dedup id). */
export function received(s: AdStandIns, conversionId: string): { google: Json[]; meta: Json[]; linkedin: Json[] } {
  return {
    google: s.google.accepted.filter((a) => String(a.event['transactionId']).startsWith(conversionId)).map((a) => a.event),
    meta: s.meta.meta.events.filter((e) => String(e['event_id']).startsWith(conversionId)),
    linkedin: s.linkedin.events.filter((e) => String(e['eventId']).startsWith(conversionId)),
  };
}

/** Checks one event per platform, keyed on the conversion and deal_won, valued at the deal amount, hashed as documented. */
export function expectSentOnce(s: AdStandIns, person: Person, amount: number): void {
  const got = received(s, person.conversionId);
  expect({ google: got.google.length, meta: got.meta.length, linkedin: got.linkedin.length }).toEqual({ google: 1, meta: 1, linkedin: 1 });
  const dedupId = `${person.conversionId}:stage:deal_won`;
  const emailHash = sha256(person.email.trim().toLowerCase());
  expect(got.google[0]).toMatchObject({
    transactionId: dedupId, conversionValue: amount, currency: 'USD', adIdentifiers: { gclid: person.gclid },
    userData: { userIdentifiers: [{ emailAddress: emailHash }] },
  });
  expect(got.meta[0]).toMatchObject({
    event_id: dedupId, action_source: 'system_generated', custom_data: { value: amount, currency: 'USD' },
    // The fbclid came from an earlier visit: fbc is dated by that click, as Meta documents.
    user_data: { em: [emailHash], fbc: `fb.1.${person.metaClickAt}.${person.fbclid}` },
  });
  expect(got.linkedin[0]).toMatchObject({
    eventId: dedupId, conversion: 'urn:lla:llaPartnerConversion:104012', conversionValue: { currencyCode: 'USD', amount: String(amount) },
    user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: emailHash }, { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: person.liFatId }] },
  });
  // No plain email left the building.
  expect(JSON.stringify([got.google, got.meta, got.linkedin])).not.toContain(person.email);
}

/** The conversion's ad rows in crm-sync's queue, by platform (the latest per platform). */
export async function adRows(admin: Admin, websiteId: string, conversionId: string): Promise<Record<string, Json>> {
  const r = await admin('GET', `/crm/writebacks?website_id=${websiteId}&conversion_id=${conversionId}`);
  expect(r.status).toBe(200);
  const rows = (r.body['data'] as Json[]).filter((row) => row['target'] !== 'crm');
  const byTarget: Record<string, Json> = {};
  for (const row of [...rows].reverse()) byTarget[String(row['target'])] = row;
  return byTarget;
}

export function describeAdConversions(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`CRM stage outcomes to Google, Meta and LinkedIn (${profileName})`, () => {
    let profile: DriverProfile;
    let stack: Stack;
    let proc: RunningProcess;
    let standIns: AdStandIns;
    let admin: Admin;
    let base: string;
    let key: string;
    let publicId: string;
    let website: { id: string; workspace_id: string };
    let connectionId: string;

    beforeAll(async () => {
      profile = await makeProfile();
      standIns = await startAdStandIns();
      stack = await startStack({ targets: AD_CONVERSION_SERVICES, env: { ...profile.env, ...standIns.env } });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      admin = crmAdmin(`http://127.0.0.1:${proc.adminPort}`, proc.settings.adminToken);
      const post = adminOf(proc);
      const ws = await post('/workspaces', { name: 'Ads back', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
      const site = await post(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
      publicId = String(site['public_id']);
      website = { id: String(site['id']), workspace_id: String(ws['id']) };
      key = String((await post('/keys', { workspace_id: ws['id'] }))['key']);
      connectionId = await connectAll(admin, website, standIns.hubspot);
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await standIns?.close();
      await profile?.cleanup();
    }, 60_000);

    it('sends a deal won in HubSpot to each platform exactly once, hashed, valued at the deal amount; a consent-denied contact to none', async () => {
      const ada = await arriveAndConvert(base, publicId, key, `ada-${randomUUID().slice(0, 6)}`, 'granted');
      const dee = await arriveAndConvert(base, publicId, key, `dee-${randomUUID().slice(0, 6)}`, 'denied');
      const adaDeal = crmDealFor(standIns.hubspot, ada, 5000);
      const deeDeal = crmDealFor(standIns.hubspot, dee, 7000);
      await syncAndWait(admin, connectionId);
      // Open deals: nothing to send yet.
      expect(received(standIns, ada.conversionId)).toEqual({ google: [], meta: [], linkedin: [] });

      winDeal(standIns.hubspot, adaDeal);
      winDeal(standIns.hubspot, deeDeal);
      await syncAndWait(admin, connectionId);
      await waitFor('one event per platform', async () => {
        const got = received(standIns, ada.conversionId);
        return got.google.length > 0 && got.meta.length > 0 && got.linkedin.length > 0 ? true : undefined;
      });
      const rows = await waitFor('the rows done', async () => {
        const r = await adRows(admin, website.id, ada.conversionId);
        return ['google_ads', 'meta_ads', 'linkedin_ads'].every((t) => r[t]?.['status'] === 'done') ? r : undefined;
      });
      expect(Object.keys(rows).sort()).toEqual(['google_ads', 'linkedin_ads', 'meta_ads']);
      // The change came from the CRM: nothing is written back to it.
      const all = await admin('GET', `/crm/writebacks?website_id=${website.id}&conversion_id=${ada.conversionId}`);
      expect((all.body['data'] as Json[]).filter((r) => r['target'] === 'crm' && r['status'] !== 'skipped')).toEqual([]);
      expect(standIns.hubspot.requests.filter((r) => r.method === 'PATCH' || (r.method === 'POST' && !r.path.endsWith('/search') && !r.path.includes('/batch/read')))).toEqual([]);

      // Denied: every platform skipped with the reason, nothing received.
      const denied = await waitFor('the denied contact planned', async () => {
        const r = await adRows(admin, website.id, dee.conversionId);
        return Object.keys(r).length === 3 ? r : undefined;
      });
      for (const row of Object.values(denied)) expect(row).toMatchObject({ status: 'skipped', detail: expect.stringContaining('consent for ad personalisation denied') });
      expect(received(standIns, dee.conversionId)).toEqual({ google: [], meta: [], linkedin: [] });

      // Another sync (nothing changed) and the deal touched again in the CRM: still once.
      standIns.hubspot.upsert('deals', { dealname: 'Deal renamed' }, adaDeal);
      await syncAndWait(admin, connectionId);
      await new Promise((r) => setTimeout(r, 1500));
      expectSentOnce(standIns, ada, 5000);
    }, 180_000);
  });
}
