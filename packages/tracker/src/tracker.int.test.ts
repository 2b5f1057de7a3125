// t.js in real headless Chromium (Debian's /usr/bin/chromium via playwright-core) against a website and a
// collect recorder on localhost. Needs Chromium: `bash scripts/ensure-browser.sh`.
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import {
  launchChromium,
  startCollectRecorder,
  startTestSite,
  type CollectRecorder,
  type RecordedEvent,
  type TestSite,
} from '../test/tracker.fixtures';

const SITE = 'site_0123abcd';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const LANDING_QUERY =
  '/?utm_source=newsletter&utm_medium=email&utm_campaign=spring&gclid=abc123&fbclid=fb456';
const YEAR_SECONDS = 31_536_000;

let browser: Browser;
let recorder: CollectRecorder;
let site: TestSite;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  recorder = await startCollectRecorder();
  site = await startTestSite({ scriptSrc: recorder.scriptUrl, site: SITE, outboundUrl: recorder.outboundUrl });
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await recorder?.close();
  await site?.close();
});

async function newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: { width: 1200, height: 700 },
    screen: { width: 1280, height: 720 },
    ...options,
  });
  contexts.push(context);
  return context;
}

/** The anonymous id a context's first pageview carried: it tells this test's events from the others'. */
async function aidOf(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === '_sl_aid');
  if (!cookie) throw new Error('no _sl_aid cookie in the context');
  return cookie.value;
}

const ofAid = (aid: string, type: string, more: (e: RecordedEvent) => boolean = () => true) => (e: RecordedEvent) =>
  e.aid === aid && e.type === type && more(e);

describe('tracker in Chromium', () => {
  it('sends a pageview with URL, UTM query, referrer, title and screen, and sets the cookie', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const landing = site.url(LANDING_QUERY);
    await page.goto(landing, { referer: 'https://news.example/some/article' });
    const pageview = await recorder.waitForEvent(
      (e) => e.type === 'pageview' && e.url === landing,
      'the landing pageview',
    );
    const aid = await aidOf(context);

    expect(pageview).toMatchObject({
      site: SITE,
      aid,
      name: null,
      url: landing,
      title: 'Landing',
      screen: '1280x720',
      props: {},
    });
    // Cross-origin referrers are cut to the origin by the browser's default referrer policy.
    expect(pageview.referrer).toMatch(/^https:\/\/news\.example\//);
    expect(pageview.id).toMatch(UUID_V4);
    expect(Math.abs(pageview.ts - Date.now())).toBeLessThan(60_000);
    expect(pageview.email).toBeUndefined();

    const cookie = (await context.cookies()).find((c) => c.name === '_sl_aid');
    expect(cookie).toMatchObject({ domain: 'localhost', path: '/', sameSite: 'Lax', secure: false, httpOnly: false });
    expect(cookie?.value).toMatch(UUID_V4);
    expect(Math.abs((cookie?.expires ?? 0) - (Date.now() / 1000 + YEAR_SECONDS))).toBeLessThan(120);

    // Sent by fetch in CORS mode (so the answer can be read), text/plain so CORS-simple: no preflight
    // ever reaches the collect origin.
    const hit = recorder.hits.find((h) => h.payload.aid === aid);
    expect(hit?.contentType).toMatch(/^text\/plain/);
    expect(hit?.mode).toBe('cors');
    expect(recorder.preflights).toBe(0);
  });

  it('replays calls queued before the script loaded, after the first pageview', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(site.url('/queued'));
    const queued = await recorder.waitForEvent(
      (e) => e.type === 'custom' && e.name === 'queued_before_load' && e.url === site.url('/queued'),
      'the queued custom event',
    );
    const aid = await aidOf(context);
    expect(queued).toMatchObject({ aid, props: { early: true } });
    const mine = recorder.events((e) => e.aid === aid);
    expect(mine.map((e) => e.type)).toEqual(['pageview', 'custom']);
    // One tick, one request: the pageview and the replayed call travel together.
    expect(recorder.hits.filter((h) => h.payload.aid === aid)).toHaveLength(1);
  });

  it('turns pushState and popstate navigations into pageviews with the previous URL as referrer', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const landing = site.url('/spa-start?x=1');
    await page.goto(landing);
    await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === landing, 'the SPA landing pageview');
    const aid = await aidOf(context);

    await page.click('#spa-link');
    const pricing = site.url('/app/pricing?tab=annual');
    const spa = await recorder.waitForEvent(ofAid(aid, 'pageview', (e) => e.url === pricing), 'the pushState pageview');
    // The page sets the title right after pushState; the pageview still carries the new one.
    expect(spa).toMatchObject({ referrer: landing, title: 'Pricing' });

    // Hash-only and same-URL history changes are not new pages.
    await page.evaluate("history.replaceState({}, '', location.pathname + location.search + '#faq')");
    await page.goBack();
    const back = await recorder.waitForEvent(
      ofAid(aid, 'pageview', (e) => e.url === landing && e.referrer !== null),
      'the popstate pageview',
    );
    expect(back.referrer).toBe(pricing);
    expect(recorder.events(ofAid(aid, 'pageview')).map((e) => e.url)).toEqual([landing, pricing, landing]);
    // The SPA link is on the site's own hostname, so it is no outbound click.
    expect(recorder.events(ofAid(aid, 'outbound'))).toEqual([]);
  });

  it('sends custom events with flat props, manual pageviews and identify(email)', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(site.url('/custom'));
    await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/custom'), 'the pageview');
    const aid = await aidOf(context);

    await page.evaluate(
      "sightline('event', 'signup_click', { plan: 'pro', seats: 3, annual: true, none: null, nested: { a: 1 } })",
    );
    const custom = await recorder.waitForEvent(ofAid(aid, 'custom', (e) => e.name === 'signup_click'), 'the custom event');
    expect(custom.props).toEqual({ plan: 'pro', seats: 3, annual: true, none: null });
    expect(custom.id).toMatch(UUID_V4);

    // The second argument is the signature made by the site's backend; it travels as `sig`.
    await page.evaluate(`sightline('identify', '  Ada.Lovelace@Example.com ', '${'ab'.repeat(32)}')`);
    const identify = await recorder.waitForEvent(ofAid(aid, 'identify'), 'the identify event');
    expect(identify).toMatchObject({ email: 'Ada.Lovelace@Example.com', sig: 'ab'.repeat(32), name: null, url: site.url('/custom') });

    // Not an email, not a name: ignored rather than sent.
    await page.evaluate("sightline('identify', 'nobody'); sightline('event', ''); sightline('pageview', { manual: true })");
    await recorder.waitForEvent(ofAid(aid, 'pageview', (e) => e.props.manual === true), 'the manual pageview');
    expect(recorder.events(ofAid(aid, 'identify'))).toHaveLength(1);
    expect(recorder.events(ofAid(aid, 'custom'))).toHaveLength(2); // signup_click + queued_before_load

    const ids = recorder.events((e) => e.aid === aid).map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("answers sightline('visitor') with the anonymous id an identify signature binds, returned and by callback, queued before load too", async () => {
    const context = await newContext();
    const page = await context.newPage();
    // Before any page script: the snippet's stub, and a call queued through it (a page asking early).
    await page.addInitScript(
      "window.sightline=function(){(window.sightline.q=window.sightline.q||[]).push(arguments)};sightline('visitor',function(id){window.queuedVisitor=id})",
    );
    await page.goto(site.url('/visitor'));
    await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/visitor'), 'the pageview');
    const aid = await aidOf(context);
    await page.waitForFunction('window.queuedVisitor !== undefined');
    const answers = await page.evaluate(
      "new Promise(function (resolve) { var returned = sightline('visitor'); sightline('visitor', function (id) { resolve([window.queuedVisitor, returned, id]); }); })",
    );
    expect(answers).toEqual([aid, aid, aid]);
    // Asking sends nothing.
    expect(recorder.events((e) => e.aid === aid).map((e) => e.type)).toEqual(['pageview', 'custom']);
  });

  it('sends outbound link clicks and form submits, never form field values', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(site.url('/links'));
    await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/links'), 'the pageview');
    const aid = await aidOf(context);

    await Promise.all([page.waitForURL(recorder.outboundUrl), page.click('#outbound-link')]);
    const outbound = await recorder.waitForEvent(ofAid(aid, 'outbound'), 'the outbound click');
    expect(outbound).toMatchObject({ url: site.url('/links'), props: { href: recorder.outboundUrl } });

    await page.goto(site.url('/form'));
    await recorder.waitForEvent(ofAid(aid, 'pageview', (e) => e.url === site.url('/form')), 'the form page pageview');
    const secret = 'secret-value-7f3a@example.com';
    await page.fill('#email-field', secret);
    await Promise.all([page.waitForURL(site.url('/thanks?src=form')), page.click('#submit-button')]);
    const submit = await recorder.waitForEvent(ofAid(aid, 'form_submit'), 'the form submit');
    expect(submit.props).toEqual({ id: 'signup-form', name: 'signup', action: site.url('/thanks?src=form') });

    expect(site.formPosts.some((body) => body.includes(encodeURIComponent(secret)))).toBe(true);
    expect(recorder.hits.some((h) => h.raw.includes('secret-value') || h.raw.includes('shadowing'))).toBe(false);
    expect(recorder.events(ofAid(aid, 'outbound'))).toHaveLength(1);
  });

  it('keeps the same anonymous id across visits and tabs, and a new browser gets a new one', async () => {
    const context = await newContext();
    const first = await context.newPage();
    await first.goto(site.url('/visit-1'));
    const v1 = await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/visit-1'), 'visit 1');
    const cookieBefore = (await context.cookies()).find((c) => c.name === '_sl_aid');
    await first.close();

    await new Promise((resolve) => setTimeout(resolve, 1100)); // so the renewed expiry is visibly later
    const second = await context.newPage();
    await second.goto(site.url('/visit-2'));
    const v2 = await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/visit-2'), 'visit 2');
    expect(v2.aid).toBe(v1.aid);
    const cookieAfter = (await context.cookies()).find((c) => c.name === '_sl_aid');
    expect(cookieAfter?.value).toBe(v1.aid);
    expect(cookieAfter?.expires ?? 0).toBeGreaterThan(cookieBefore?.expires ?? Infinity); // renewed per visit

    const other = await newContext();
    const page = await other.newPage();
    await page.goto(site.url('/visit-3'));
    const v3 = await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/visit-3'), 'visit 3');
    expect(v3.aid).not.toBe(v1.aid);
  });

  it('sends by fetch whether or not sendBeacon exists (the beacon is only for unload)', async () => {
    const context = await newContext();
    await context.addInitScript('Object.defineProperty(Navigator.prototype, "sendBeacon", { value: undefined })');
    const page = await context.newPage();
    await page.goto(site.url('/no-beacon'));
    expect(await page.evaluate('typeof navigator.sendBeacon')).toBe('undefined');
    await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/no-beacon'), 'the fetch pageview');
    const aid = await aidOf(context);
    const hit = recorder.hits.find((h) => h.payload.aid === aid);
    expect(hit?.contentType).toMatch(/^text\/plain/);
    expect(hit?.mode).toBe('cors');
    expect(recorder.preflights).toBe(0);
  });

  it('honours Do Not Track only on sites that opt in with data-respect-dnt', async () => {
    const dntSite = await startTestSite({
      scriptSrc: recorder.scriptUrl,
      site: 'site_dnt00001',
      respectDnt: true,
      outboundUrl: recorder.outboundUrl,
    });
    try {
      const context = await newContext();
      await context.addInitScript('Object.defineProperty(Navigator.prototype, "doNotTrack", { get: () => "1" })');
      const page = await context.newPage();
      await page.goto(dntSite.url('/dnt'));
      expect(await page.evaluate('navigator.doNotTrack')).toBe('1');
      await page.evaluate("sightline('event', 'should_not_send')");
      // The same browser on a site without the attribute is tracked; once that arrives, the DNT page's
      // hits (flushed on its pagehide at the latest) would have arrived too.
      await page.goto(site.url('/dnt-control'));
      await recorder.waitForEvent((e) => e.type === 'pageview' && e.url === site.url('/dnt-control'), 'the control pageview');
      await page.close();
      expect(recorder.events((e) => e.site === 'site_dnt00001')).toEqual([]);
    } finally {
      await dntSite.close();
    }
  });
});
