// t.js when the collect endpoint refuses (503 with Retry-After while its backlog is full or it is
// draining, 429, a dropped connection): hits wait in the page and are sent again, within bounds, and
// whatever still waits when the page goes away leaves by sendBeacon. Real headless Chromium against
// a collect recorder told how to answer. Needs Chromium: `bash scripts/ensure-browser.sh`.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  launchChromium,
  startCollectRecorder,
  startTestSite,
  waitUntil,
  type CollectRecorder,
  type CollectResponder,
  type RecordedHit,
  type TestSite,
} from '../test/tracker.fixtures';

const SITE = 'site_retry001';
const unavailable = (seconds: string) => ({ status: 503, headers: { 'Retry-After': seconds, 'Content-Type': 'application/problem+json' } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let browser: Browser;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  for (const thing of open.reverse()) await thing.close().catch(() => undefined);
  await browser?.close();
});

/** A recorder answering as `respond` says, a site loading t.js from it, and a fresh browser context. */
async function setUp(respond: CollectResponder): Promise<{ recorder: CollectRecorder; site: TestSite; context: BrowserContext; page: Page }> {
  const recorder = await startCollectRecorder({ respond });
  open.push(recorder);
  const site = await startTestSite({ scriptSrc: recorder.scriptUrl, site: SITE, outboundUrl: recorder.outboundUrl });
  open.push(site);
  const context = await browser.newContext();
  open.push(context);
  return { recorder, site, context, page: await context.newPage() };
}

/** Event ids of the requests, one entry per time an event was received. */
const idsOf = (hits: RecordedHit[]) => hits.flatMap((hit) => hit.payload.events.map((event) => event.id));
const namesOf = (hits: RecordedHit[]) => hits.flatMap((hit) => hit.payload.events.map((event) => event.name ?? event.type));

/** Every id once, and nothing else. */
function expectExactlyOnce(hits: RecordedHit[], count: number): void {
  const ids = idsOf(hits);
  expect(ids).toHaveLength(count);
  expect(new Set(ids).size).toBe(count);
}

describe('tracker retries refused hits (Chromium)', () => {
  it('sends a hit refused with 503 again after Retry-After until it is accepted: every hit arrives exactly once', async () => {
    const REFUSED = 3;
    const { recorder, site, page } = await setUp((_hit, index) => (index < REFUSED ? unavailable('1') : undefined));
    await page.goto(site.url('/retry'));
    // Hits raised while the first request is out, and while the page waits to retry.
    await page.evaluate("sightline('event', 'during_first_send')");
    await waitUntil(() => recorder.refused[0], 'the first refusal', 10_000);
    await page.evaluate("sightline('event', 'during_backoff', { n: 1 }); setTimeout(function () { sightline('event', 'during_backoff', { n: 2 }) }, 300)");

    const expected = ['pageview', 'queued_before_load', 'during_first_send', 'during_backoff', 'during_backoff'];
    await waitUntil(() => (namesOf(recorder.hits).length >= expected.length ? true : undefined), 'every hit accepted', 30_000);
    await sleep(2_500); // longer than any retry the tracker could still have pending
    expect(recorder.refused).toHaveLength(REFUSED);
    expect(recorder.refused.every((hit) => hit.mode === 'cors')).toBe(true);
    expect(namesOf(recorder.hits).sort()).toEqual([...expected].sort());
    expectExactlyOnce(recorder.hits, expected.length);
    // Sent by fetch (the answer is readable), CORS-simple, so no preflight.
    expect(recorder.hits.every((hit) => hit.mode === 'cors' && /^text\/plain/.test(hit.contentType ?? ''))).toBe(true);
    expect(recorder.preflights).toBe(0);

    // Retry-After honoured: each refused hit came back no sooner than 1 s later, and the exponential
    // backoff (1, 2, 4 s) was not used instead: the third refusal was retried within 1 s plus jitter.
    const all = [...recorder.refused, ...recorder.hits].sort((a, b) => a.at - b.at);
    for (const refusal of recorder.refused) {
      const first = refusal.payload.events[0]!.id;
      const next = all.find((hit) => hit.at > refusal.at && idsOf([hit]).includes(first));
      expect(next).toBeDefined();
      expect(next!.at - refusal.at).toBeGreaterThanOrEqual(1_000);
      expect(next!.at - refusal.at).toBeLessThan(2_500);
    }
  }, 60_000);

  it('retries a dropped connection and a 429 with backoff, and never retries another 4xx', async () => {
    // 1st request: connection dropped; 2nd: 429 without Retry-After; 3rd: 202.
    const answers = [{ status: 0 }, { status: 429 }];
    const { recorder, site, page } = await setUp((hit, index) => (hit.payload.events.some((e) => e.name === 'bad') ? { status: 400 } : answers[index]));
    await page.goto(site.url('/flaky'));
    await waitUntil(() => recorder.hits[0], 'the pageview, accepted at last', 20_000);
    expect(recorder.refused.map((hit) => hit.status)).toEqual([0, 429]);
    expect(recorder.refused[1]!.at - recorder.refused[0]!.at).toBeGreaterThanOrEqual(1_000); // 1 s, then 2 s
    expect(recorder.hits[0]!.at - recorder.refused[1]!.at).toBeGreaterThanOrEqual(2_000);
    expectExactlyOnce(recorder.hits, 2); // pageview + queued_before_load

    // A 400 says the request itself is wrong: sending it again would not help.
    await page.evaluate("sightline('event', 'bad')");
    await waitUntil(() => recorder.refused[2], 'the 400', 10_000);
    await sleep(2_500);
    expect(recorder.refused.map((hit) => hit.status)).toEqual([0, 429, 400]);
    expect(recorder.hits).toHaveLength(1);
  }, 60_000);

  it('sends hits still waiting to be retried by sendBeacon when the page is left', async () => {
    // The tracker's fetch (mode cors) is refused for an hour; a beacon (no-cors) is accepted.
    const { recorder, site, page } = await setUp((hit) => (hit.mode === 'cors' ? unavailable('3600') : undefined));
    await page.goto(site.url('/leave'));
    await waitUntil(() => recorder.refused[0], 'the refused pageview', 10_000);
    await page.evaluate("sightline('event', 'waiting', { n: 1 }); sightline('event', 'waiting', { n: 2 })");
    await sleep(300);
    expect(recorder.hits).toHaveLength(0); // they wait for the retry rather than meet the same refusal

    await page.goto(recorder.outboundUrl); // pagehide
    await waitUntil(() => (namesOf(recorder.hits).length >= 4 ? true : undefined), 'the beacon', 10_000);
    await sleep(500);
    expect(namesOf(recorder.hits).sort()).toEqual(['pageview', 'queued_before_load', 'waiting', 'waiting']);
    expectExactlyOnce(recorder.hits, 4);
    expect(recorder.hits.every((hit) => hit.mode === 'no-cors')).toBe(true);
    expect(recorder.refused).toHaveLength(1);
  }, 60_000);

  it('sends them by sendBeacon when the tab is closed', async () => {
    const { recorder, site, page } = await setUp((hit) => (hit.mode === 'cors' ? unavailable('3600') : undefined));
    await page.goto(site.url('/close'));
    await waitUntil(() => recorder.refused[0], 'the refused pageview', 10_000);
    await page.evaluate("sightline('event', 'before_close')");
    await page.close();
    await waitUntil(() => (namesOf(recorder.hits).length >= 3 ? true : undefined), 'the beacon', 10_000);
    await sleep(500);
    expect(namesOf(recorder.hits).sort()).toEqual(['before_close', 'pageview', 'queued_before_load']);
    expectExactlyOnce(recorder.hits, 3);
    expect(recorder.hits.every((hit) => hit.mode === 'no-cors')).toBe(true);
  }, 60_000);

  it('sends them by fetch(keepalive) when the page is left and sendBeacon is missing', async () => {
    const { recorder, site, context, page } = await setUp((_hit, index) => (index === 0 ? unavailable('3600') : undefined));
    await context.addInitScript('Object.defineProperty(Navigator.prototype, "sendBeacon", { value: undefined })');
    await page.goto(site.url('/no-beacon'));
    await waitUntil(() => recorder.refused[0], 'the refused pageview', 10_000);
    await page.goto(recorder.outboundUrl);
    await waitUntil(() => (namesOf(recorder.hits).length >= 2 ? true : undefined), 'the unload fetch', 10_000);
    expect(namesOf(recorder.hits).sort()).toEqual(['pageview', 'queued_before_load']);
    expect(recorder.hits.every((hit) => hit.mode === 'cors')).toBe(true);
    expectExactlyOnce(recorder.hits, 2);
  }, 60_000);

  it('keeps at most 100 hits waiting, the newest, and sends them in requests of at most 50', async () => {
    const { recorder, site, page } = await setUp((hit) => (hit.mode === 'cors' ? unavailable('3600') : undefined));
    await page.goto(site.url('/many'));
    await waitUntil(() => recorder.refused[0], 'the refused pageview', 10_000);
    await page.evaluate("for (var i = 1; i <= 150; i++) sightline('event', 'e' + i)");
    await page.goto(recorder.outboundUrl);
    await waitUntil(() => (namesOf(recorder.hits).length >= 100 ? true : undefined), 'the beacons', 10_000);
    await sleep(500);
    expect(namesOf(recorder.hits)).toEqual(Array.from({ length: 100 }, (_, i) => `e${i + 51}`));
    expect(recorder.hits.map((hit) => hit.payload.events.length)).toEqual([50, 50]);
    expectExactlyOnce(recorder.hits, 100);
  }, 60_000);

  it('gives a hit up after 5 attempts', async () => {
    const { recorder, site, context, page } = await setUp((hit) => (hit.mode === 'cors' ? { status: 503 } : undefined));
    await context.clock.install();
    await page.goto(site.url('/give-up'));
    await waitUntil(() => recorder.refused[0], 'attempt 1', 10_000);
    for (let attempt = 2; attempt <= 5; attempt += 1) {
      // Past 1, 2, 4, 8 s plus half again of jitter. The server records a refusal before the page has
      // read the answer and set its retry timer, so one jump can come too early: jump again until the
      // next attempt arrives (the timer is set only after an answer, so one jump fires at most one).
      const deadline = Date.now() + 10_000;
      while (!recorder.refused[attempt - 1] && Date.now() < deadline) {
        await context.clock.fastForward(20_000);
        await sleep(100);
      }
      await waitUntil(() => recorder.refused[attempt - 1], `attempt ${attempt}`, 1_000);
    }
    await sleep(1_000);
    await context.clock.fastForward(60_000);
    await sleep(1_000);
    expect(recorder.refused).toHaveLength(5);
    expect(new Set(recorder.refused.map((hit) => idsOf([hit]).join())).size).toBe(1); // the same hits each time
    await page.goto(recorder.outboundUrl); // nothing is left for a beacon
    await sleep(1_000);
    expect(recorder.hits).toHaveLength(0);
  }, 60_000);
});
