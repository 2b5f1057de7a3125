// The tracker end to end in real Chromium: a page loads /t.js from the gateway, hits go to the
// gateway's /collect, ingest classifies them, and the facts it publishes carry the visit.
import type { Browser } from 'playwright-core';
import { defineStandIn, type Envelope, type RunningProcess } from '@sightline/kit';
import type { ClassifiedEventV1, EventBatchV1 } from '@sightline/proto-schemas';
import { identifySignature, unboundIdentifySignature } from '@sightline/tracker';
import { launchChromium, startTestSite, type TestSite } from '../packages/tracker/test/tracker.fixtures';
import { adminOf } from './admin-client';
import { startStack, type Stack } from './stack';

describe('tracker → gateway /collect → ingest (Chromium, embedded)', () => {
  let proc: RunningProcess;
  let browser: Browser;
  let site: TestSite;
  let stack: Stack;
  let identifySecret: string;
  let publicId: string;
  const events: ClassifiedEventV1[] = [];

  const waitFor = async <T>(what: string, probe: () => T | undefined): Promise<T> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => [e.event_type, e.page]))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    const recorder = defineStandIn({
      name: 'attribution',
      needs: {},
      async create() {
        return { consumers: { 'events.classified': async (e: Envelope) => void events.push(...(e.payload as EventBatchV1).events) } };
      },
    });
    stack = await startStack({ targets: ['gateway', 'ingest'], standIns: [recorder] });
    proc = stack.proc;
    const admin = adminOf(proc);
    const ws = await admin('/workspaces', { name: 'Tracker', plan: 'internal' });
    const website = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'localhost' });
    identifySecret = String(website['identify_secret']);
    publicId = String(website['public_id']);
    site = await startTestSite({ scriptSrc: `http://127.0.0.1:${proc.publicPort}/t.js`, site: publicId, outboundUrl: 'http://127.0.0.1:9/elsewhere' });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await stack?.stop();
  }, 60_000);

  it('a visit from a campaign arrives classified, with SPA navigation, custom event and identify in one session', async () => {
    // Headless Chromium announces itself as HeadlessChrome, which ingest rightly drops as a bot;
    // browse as the desktop Chrome a real visitor would run.
    const userAgent = (await browser.newContext().then(async (c) => {
      const ua = await (await c.newPage()).evaluate('navigator.userAgent');
      await c.close();
      return String(ua);
    })).replace('HeadlessChrome', 'Chrome');
    const context = await browser.newContext({ userAgent });
    const page = await context.newPage();
    await page.goto(site.url('/?utm_source=newsletter&utm_medium=email&utm_campaign=launch'));
    const landing = await waitFor('the landing pageview', () => events.find((e) => e.event_type === 'pageview' && e.page === '/'));
    expect(landing.channel).toBe('Email');
    expect(landing.campaign).toBe('launch');
    expect(landing.browser).toBe('Chrome');

    await page.click('#spa-link');
    // Runs in the page (no DOM types in this Node test): the tracker's global API.
    // identify() is believed only with the signature the website's backend makes for this visitor (the
    // page asks the tracker for its id, as the README's flow does); unsigned or unbound claims are dropped.
    const visitor = String(await page.evaluate("new Promise(function (resolve) { sightline('visitor', resolve); })"));
    const signature = identifySignature({ secret: identifySecret, site: publicId, visitor, email: 'visitor@example.com', expiresAt: new Date(Date.now() + 600_000) });
    await page.evaluate(`sightline('identify', 'impostor@example.com'); sightline('event', 'video_played', { seconds: 12 }); sightline('identify', 'visitor@example.com', '${signature}');`);
    const spa = await waitFor('the SPA pageview', () => events.find((e) => e.event_type === 'pageview' && e.page === '/app/pricing'));
    const custom = await waitFor('the custom event', () => events.find((e) => e.event_name === 'video_played'));
    const identify = await waitFor('identify', () => events.find((e) => e.event_type === 'identify'));
    expect(identify.email).toBe('visitor@example.com');
    expect(events.filter((e) => e.event_type === 'identify').map((e) => e.email)).toEqual(['visitor@example.com']);
    for (const e of [spa, custom, identify]) {
      expect(e.anonymous_id).toBe(landing.anonymous_id);
      expect(e.session_id).toBe(landing.session_id);
      expect(e.identity_id).toBe(landing.identity_id);
      expect(e.session?.channel).toBe('Email');
    }
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === '_sl_aid')?.value).toBe(landing.anonymous_id);
    expect(visitor).toBe(landing.anonymous_id);

    // Another browser replaying that signature (seen in a page, a log, a shared link) is not glued to the
    // person, nor with the old unbound form (the email's HMAC alone), refused by default.
    const unbound = unboundIdentifySignature(identifySecret, 'visitor@example.com');
    const other = await browser.newContext({ userAgent });
    const replayer = await other.newPage();
    await replayer.goto(site.url('/replay'));
    await replayer.evaluate(`sightline('identify', 'visitor@example.com', '${signature}'); sightline('identify', 'visitor@example.com', '${unbound}'); sightline('event', 'replayed');`);
    const replayed = await waitFor('the replayer\'s event', () => events.find((e) => e.event_name === 'replayed'));
    expect(replayed.anonymous_id).not.toBe(landing.anonymous_id);
    expect(events.filter((e) => e.event_type === 'identify').map((e) => e.anonymous_id)).toEqual([landing.anonymous_id]);
    await other.close();
    await context.close();
  }, 60_000);
});
