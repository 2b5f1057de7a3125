// The counting rules of README.md ("Counting", "Peers"), one test each, on journeys written by
// hand and run through the funnels module as the bus and the gateway drive it (embedded stores).
import { randomUUID } from 'node:crypto';
import type { IngestWebsiteV1 } from '@sightline/proto-schemas';
import { classified, DAY, HOUR, MINUTE, milestone, T0, website, type EventSpec } from '../test/events';
import { FunnelsHarness, type Json } from '../test/harness';

let h: FunnelsHarness;
beforeAll(async () => {
  h = await FunnelsHarness.start();
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const PERIOD = { from: new Date(T0).toISOString(), to: new Date(T0 + 7 * DAY).toISOString() };
const path = (p: string, name = p) => ({ name, conditions: { path_matches: p } });
const type = (t: string, name = t) => ({ name, conditions: { event_type: t } });

/** A fresh website holding the journeys, and a funnel on it. */
async function setup(specs: EventSpec[], funnel: Json): Promise<{ site: IngestWebsiteV1; id: string }> {
  const site = website();
  await h.events(site, specs.map((s) => classified(s, site)));
  const created = await h.create(site, funnel);
  return { site, id: String(created['id']) };
}

const reached = async (site: IngestWebsiteV1, id: string, raw: Record<string, string> = PERIOD): Promise<number[]> =>
  (await h.steps(site, id, raw)).data.map((r) => Number(r['reached']));

describe('entry and window', () => {
  it('counts a step after the end of the period when it falls inside the window of an entry in the period', async () => {
    const last = T0 + 7 * DAY - MINUTE;
    const { site, id } = await setup([
      { person: 'late', at: last, page: '/' },
      { person: 'late', at: last + 5 * DAY, page: '/pricing' },
      // Entered before the period: not counted at all, even though its second step is inside.
      { person: 'early', at: T0 - MINUTE, page: '/' },
      { person: 'early', at: T0 + HOUR, page: '/pricing' },
    ], { window_days: 7, steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([1, 1]);
  });

  it('counts window_days × 24 h from the first step, that instant included, and not one millisecond more', async () => {
    const W = 2 * DAY;
    const { site, id } = await setup([
      { person: 'edge', at: T0 + HOUR, page: '/' },
      { person: 'edge', at: T0 + HOUR + W, page: '/pricing' },
      { person: 'past', at: T0 + HOUR, page: '/' },
      { person: 'past', at: T0 + HOUR + W + 1, page: '/pricing' },
    ], { window_days: 2, steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([2, 1]);
  });

  it('measures the window from the first step, not from the previous one (unlike a per-step window)', async () => {
    const { site, id } = await setup([
      { person: 'p', at: T0 + HOUR, page: '/' },
      { person: 'p', at: T0 + 21 * HOUR, page: '/pricing' },
      { person: 'p', at: T0 + 41 * HOUR, page: '/signup' },
    ], { window_days: 1, steps: [path('/'), path('/pricing'), path('/signup')] });
    expect(await reached(site, id)).toEqual([1, 1, 0]);
  });

  it('takes the entry period as instants: an entry at `to` is outside, one at `from` inside', async () => {
    const { site, id } = await setup([
      { person: 'at-from', at: T0, page: '/' },
      { person: 'at-to', at: T0 + 7 * DAY, page: '/' },
      { person: 'before-to', at: T0 + 7 * DAY - 1, page: '/' },
    ], { steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([2, 0]);
  });
});

describe('events and steps', () => {
  it('lets one event fill at most one step: a single page view is not two page-view steps', async () => {
    const { site, id } = await setup([
      { person: 'once', at: T0 + HOUR, page: '/' },
      { person: 'twice', at: T0 + HOUR, page: '/' },
      { person: 'twice', at: T0 + 2 * HOUR, page: '/a' },
    ], { steps: [type('pageview', 'View'), type('pageview', 'View again')] });
    expect(await reached(site, id)).toEqual([2, 1]);
  });

  it('counts repeated events that share a timestamp as separate events (each fills its own step)', async () => {
    const { site, id } = await setup([
      { person: 'p', at: T0 + MINUTE, type: 'custom', name: 'finished_onboarding', page: null },
      { person: 'p', at: T0 + 10 * MINUTE, page: '/a' },
      { person: 'p', at: T0 + 10 * MINUTE, page: '/b' },
      { person: 'p', at: T0 + 11 * MINUTE, page: '/c' },
    ], { steps: [{ name: 'Onboarded', conditions: { event_name_matches: 'finished_onboarding' } }, type('pageview', 'v1'), type('pageview', 'v2'), type('pageview', 'v3')] });
    expect(await reached(site, id)).toEqual([1, 1, 1, 1]);
  });

  it('lets events of the same millisecond fill consecutive steps in step order, whatever their ids', async () => {
    const at = T0 + HOUR;
    // Ids chosen so that id order is the reverse of step order.
    const { site, id } = await setup([
      { person: 'p', at, type: 'form_submit', page: '/signup', id: 'ffffffff-0000-4000-8000-000000000000' },
      { person: 'p', at, type: 'conversion', name: 'signup', page: null, id: '00000000-0000-4000-8000-000000000000' },
    ], { steps: [type('form_submit', 'Submit'), type('conversion', 'Signed up')] });
    expect(await reached(site, id)).toEqual([1, 1]);
    const steps = await h.steps(site, id, PERIOD);
    expect(steps.data[1]?.['median_seconds_from_previous']).toBe(0);
  });

  it('counts people, not conversions: completing twice counts once', async () => {
    const { site, id } = await setup([
      { person: 'p', at: T0 + HOUR, page: '/' },
      { person: 'p', at: T0 + 2 * HOUR, page: '/pricing' },
      { person: 'p', at: T0 + 3 * HOUR, page: '/' },
      { person: 'p', at: T0 + 4 * HOUR, page: '/pricing' },
    ], { steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([1, 1]);
  });

  it('counts a person whose first attempt failed and a later one succeeded, with the times of the succeeding attempt', async () => {
    const { site, id } = await setup([
      { person: 'p', at: T0 + HOUR, page: '/' },
      { person: 'p', at: T0 + 3 * DAY, page: '/' },
      { person: 'p', at: T0 + 3 * DAY + 90_000, page: '/pricing' },
    ], { window_days: 1, steps: [path('/'), path('/pricing')] });
    const steps = await h.steps(site, id, PERIOD);
    expect(steps.data.map((r) => r['reached'])).toEqual([1, 1]);
    expect(steps.data[1]?.['median_seconds_from_previous']).toBe(90);
  });

  it('reports the median as the mean of the two middle values for an even count', async () => {
    const specs: EventSpec[] = [10, 20, 40, 80].flatMap((s, i) => [
      { person: `p${i}`, at: T0 + HOUR, page: '/' },
      { person: `p${i}`, at: T0 + HOUR + s * 1000, page: '/pricing' },
    ]);
    const { site, id } = await setup(specs, { steps: [path('/'), path('/pricing')] });
    const steps = await h.steps(site, id, PERIOD);
    expect(steps.data[1]).toMatchObject({ reached: 4, median_seconds_from_previous: 30, conv_vs_prev: 1, conv_vs_first: 1 });
    expect(steps.data[0]).toMatchObject({ median_seconds_from_previous: null, conv_vs_prev: null });
  });

  it('matches patterns on the whole value, case-sensitively, `*` for any run; an absent value matches nothing', async () => {
    const { site, id } = await setup([
      { person: 'a', at: T0 + HOUR, page: '/blog/post-1' },
      { person: 'b', at: T0 + HOUR, page: '/Blog/post-2' },
      { person: 'c', at: T0 + HOUR, page: '/blog' },
      { person: 'd', at: T0 + HOUR, type: 'custom', name: 'x', page: null, url: null },
      { person: 'e', at: T0 + HOUR, page: '/blog_x/y' },
    ], { steps: [path('/blog/*'), path('*')] });
    expect(await reached(site, id)).toEqual([1, 0]);
    const anyPage = await h.create(site, { steps: [path('*'), type('custom')] });
    expect(await reached(site, String(anyPage['id']))).toEqual([4, 0]);
  });

  it('matches click text on the text property of custom events', async () => {
    const { site, id } = await setup([
      { person: 'a', at: T0 + HOUR, page: '/pricing' },
      { person: 'a', at: T0 + 2 * HOUR, type: 'custom', name: 'cta', text: 'Start free trial', page: '/pricing' },
      { person: 'b', at: T0 + HOUR, page: '/pricing' },
      { person: 'b', at: T0 + 2 * HOUR, type: 'custom', name: 'cta', text: 'Contact sales', page: '/pricing' },
    ], { steps: [path('/pricing'), { name: 'Trial click', conditions: { click_text_matches: 'Start*' } }] });
    expect(await reached(site, id)).toEqual([2, 1]);
  });
});

describe('step orders', () => {
  const journeys: EventSpec[] = [
    { person: 'inorder', at: T0 + HOUR, page: '/' },
    { person: 'inorder', at: T0 + 2 * HOUR, page: '/pricing' },
    { person: 'between', at: T0 + HOUR, page: '/' },
    { person: 'between', at: T0 + 90 * MINUTE, page: '/about' },
    { person: 'between', at: T0 + 2 * HOUR, page: '/pricing' },
    { person: 'identify', at: T0 + HOUR, page: '/' },
    { person: 'identify', at: T0 + 90 * MINUTE, type: 'identify', email: 'id@example.com' },
    { person: 'identify', at: T0 + 2 * HOUR, page: '/pricing' },
    { person: 'reverse', at: T0 + HOUR, page: '/pricing' },
    { person: 'reverse', at: T0 + 2 * HOUR, page: '/' },
  ];

  it('sequential: other events may happen between steps; reverse order does not convert', async () => {
    const { site, id } = await setup(journeys, { step_order: 'sequential', steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([4, 3]);
  });

  it('strict: another tracked event between steps breaks the attempt; an identify call does not', async () => {
    const { site, id } = await setup(journeys, { step_order: 'strict', steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([4, 2]);
  });

  it('any_order: steps in either order, each filled by a different event', async () => {
    const { site, id } = await setup([...journeys, { person: 'one-event', at: T0 + HOUR, type: 'custom', name: 'both', page: '/x' }], {
      step_order: 'any_order',
      steps: [{ name: 'A', conditions: { event_name_matches: 'both' } }, { name: 'B', conditions: { path_matches: '/x' } }],
    });
    expect(await reached(site, id)).toEqual([1, 0]);
    const both = await h.create(site, { step_order: 'any_order', steps: [path('/'), path('/pricing')] });
    const r = await h.steps(site, String(both['id']), PERIOD);
    expect(r.data.map((x) => x['reached'])).toEqual([4, 4]);
    expect(r.data.map((x) => x['median_seconds_from_previous'])).toEqual([null, null]);
  });

  it('any_order matches distinct events to steps even when one event could fill either', async () => {
    // The first event fills step 1 or 2; the second only step 1: both steps are done.
    const { site, id } = await setup([
      { person: 'p', at: T0 + HOUR, page: '/pricing', type: 'pageview' },
      { person: 'p', at: T0 + 2 * HOUR, page: '/', type: 'pageview' },
    ], { step_order: 'any_order', steps: [type('pageview', 'Any page'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([1, 1]);
  });
});

describe('people', () => {
  it('visitor scope stitches devices: steps on two devices merged later make one converted person', async () => {
    const site = website();
    await h.events(site, [classified({ person: 'phone', at: T0 + HOUR, page: '/' }, site), classified({ person: 'laptop', at: T0 + 2 * HOUR, page: '/pricing' }, site)]);
    const created = await h.create(site, { steps: [path('/'), path('/pricing')] });
    const id = String(created['id']);
    expect(await reached(site, id)).toEqual([1, 0]);
    await h.merge(site, 'laptop', 'phone');
    expect(await reached(site, id)).toEqual([1, 1]);
    // Nothing stored was rewritten: the events keep the identity they arrived with.
    const [row] = await h.ch.query<{ n: string }>("SELECT count() AS n FROM identity_events WHERE website_id = {w:UUID} AND identity_id = 'laptop'", { w: site.id });
    expect(Number(row?.n)).toBe(1);
  });

  it('user scope counts identified people only, with their anonymous history before they identified', async () => {
    const { site, id } = await setup([
      { person: 'known', at: T0 + HOUR, page: '/' },
      { person: 'known', at: T0 + 2 * HOUR, page: '/pricing' },
      { person: 'known', at: T0 + 3 * HOUR, type: 'identify', email: 'known@example.com', page: '/pricing' },
      { person: 'anon', at: T0 + HOUR, page: '/' },
      { person: 'anon', at: T0 + 2 * HOUR, page: '/pricing' },
    ], { scope: 'user', steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([1, 1]);
    const visitors = await h.create(site, { scope: 'visitor', steps: [path('/'), path('/pricing')] });
    expect(await reached(site, String(visitors['id']))).toEqual([2, 2]);
    const anonymous = await h.create(site, { filters: { identified: false }, steps: [path('/'), path('/pricing')] });
    expect(await reached(site, String(anonymous['id']))).toEqual([1, 1]);
  });

  it('keys a revenue step by the person the milestone names, by email, even when the milestone arrives first', async () => {
    const site = website();
    await h.milestones(site, [milestone(site, { stage: 'trial_started', at: T0 + DAY, email: 'Buyer@Example.com', id: 'm-1' })]);
    await h.events(site, [
      classified({ person: 'buyer', at: T0 + HOUR, page: '/pricing' }, site),
      classified({ person: 'buyer', at: T0 + 2 * HOUR, type: 'identify', email: 'buyer@example.com', page: '/pricing' }, site),
      classified({ person: 'other', at: T0 + HOUR, page: '/pricing' }, site),
    ]);
    const created = await h.create(site, { steps: [path('/pricing'), { name: 'Trial', conditions: { source: 'revenue', revenue_event: 'trial_started' } }] });
    expect(await reached(site, String(created['id']))).toEqual([2, 1]);
    // The same milestone delivered again (a CRM resync) counts once; other stages are not revenue.
    await h.milestones(site, [milestone(site, { stage: 'trial_started', at: T0 + DAY, email: 'buyer@example.com', id: 'm-1' }), milestone(site, { stage: 'mql', at: T0 + DAY, email: 'buyer@example.com' })]);
    expect(await reached(site, String(created['id']))).toEqual([2, 1]);
  });

  it('applies the audience filter to the event that enters the funnel', async () => {
    const { site, id } = await setup([
      { person: 'mail', at: T0 + HOUR, page: '/', channel: 'Email' },
      { person: 'mail', at: T0 + 2 * HOUR, page: '/pricing', channel: 'Direct', session: 's2' },
      { person: 'search', at: T0 + HOUR, page: '/', channel: 'Organic Search' },
      { person: 'search', at: T0 + 2 * HOUR, page: '/pricing', channel: 'Email', session: 's3' },
    ], { filters: { channel: 'Email' }, steps: [path('/'), path('/pricing')] });
    expect(await reached(site, id)).toEqual([1, 1]);
  });

  it('reads a redelivered batch once', async () => {
    const site = website();
    const batch = [classified({ person: 'p', at: T0 + HOUR, page: '/' }, site), classified({ person: 'p', at: T0 + 2 * HOUR, page: '/' }, site)];
    await h.events(site, batch);
    await h.events(site, batch);
    // A duplicate that slipped past the insert token: a second insert under another token.
    await h.ch.insert('identity_events', [{ website_id: site.id, occurred_at: batch[0]!.occurred_at, event_id: batch[0]!.event_id, identity_id: 'p', event_type: 'pageview', page: '/' }], { dedupToken: randomUUID() });
    const created = await h.create(site, { steps: [path('/'), path('/')] });
    const steps = await h.steps(site, String(created['id']), PERIOD);
    expect(steps.data.map((r) => r['reached'])).toEqual([1, 1]);
    expect(steps.data[1]?.['median_seconds_from_previous']).toBe(3600);
  });
});

describe('comparison and breakdown', () => {
  it('compare_days=previous computes the preceding window of equal length; N shifts back N days', async () => {
    const { site, id } = await setup([
      { person: 'now', at: T0 + HOUR, page: '/' },
      { person: 'then', at: T0 - 3 * DAY, page: '/' },
      { person: 'then', at: T0 - 3 * DAY + HOUR, page: '/pricing' },
    ], { steps: [path('/'), path('/pricing')] });
    const r = await h.steps(site, id, { ...PERIOD, compare_days: 'previous' });
    expect(r.data.map((x) => x['reached'])).toEqual([1, 0]);
    expect(r.previous?.window).toEqual({ from: new Date(T0 - 7 * DAY).toISOString(), to: PERIOD.from, expression: null });
    expect(r.previous?.data.map((x) => x['reached'])).toEqual([1, 1]);
    const shifted = await h.steps(site, id, { ...PERIOD, compare_days: '3' });
    expect(shifted.previous?.window['from']).toBe(new Date(T0 - 3 * DAY).toISOString());
    expect(shifted.previous?.data.map((x) => x['reached'])).toEqual([2, 1]);
    expect((await h.steps(site, id, { ...PERIOD, compare_days: '731' })).previous?.data).toHaveLength(2);
    const tooFar = await h.problem(h.steps(site, id, { ...PERIOD, compare_days: '732' }));
    expect(tooFar['kind']).toBe('invalid-request');
    expect(r.meta).toMatchObject({ timezone: 'UTC', currency: 'EUR', window: { from: PERIOD.from, to: PERIOD.to, expression: null } });
    expect(Object.keys(r.meta['definitions'] as Json)).toEqual(expect.arrayContaining(['reached', 'conv_vs_prev', 'conv_vs_first', 'median_seconds_from_previous']));
  });

  it('compares in local calendar days: across a DST change the previous day runs midnight to midnight', async () => {
    // Berlin's 29 March 2026 has 23 hours. 28 March 23:30 local (22:30Z) is outside the day before
    // 30 March; equal milliseconds (28 Mar 22:00Z .. 29 Mar 22:00Z) took it in.
    const site = { ...website(), timezone: 'Europe/Berlin' };
    await h.events(site, [
      { person: 'in', at: Date.parse('2026-03-29T10:00:00Z'), page: '/' },
      { person: 'before', at: Date.parse('2026-03-28T22:30:00Z'), page: '/' },
    ].map((s) => classified(s, site)));
    const id = String((await h.create(site, { steps: [path('/'), path('/pricing')] }))['id']);
    const previous = await h.steps(site, id, { period: '2026-03-30', compare_days: 'previous' });
    expect(previous.previous?.window).toEqual({ from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z', expression: null });
    expect(previous.previous?.data.map((x) => x['reached'])).toEqual([1, 0]);
    const week = await h.steps(site, id, { period: '2026-03-30', compare_days: '7' });
    expect(week.previous?.window).toEqual({ from: '2026-03-22T23:00:00.000Z', to: '2026-03-23T23:00:00.000Z', expression: null });
    const autumn = await h.steps(site, id, { period: '2026-10-26', compare_days: '1' });
    expect(autumn.previous?.window).toEqual({ from: '2026-10-24T22:00:00.000Z', to: '2026-10-25T23:00:00.000Z', expression: null });
  });

  it('breaks down by the touches before entering; Unattributed without one; rows beyond limit fold into Other', async () => {
    const { site, id } = await setup([
      // Two touches before entering: Email (a week before), then Organic Search (the entry session).
      { person: 'a', at: T0 - 7 * DAY, page: '/blog', channel: 'Email', session: 'a1' },
      { person: 'a', at: T0 + HOUR, page: '/', channel: 'Organic Search', session: 'a2' },
      { person: 'a', at: T0 + 2 * HOUR, page: '/pricing', channel: 'Referral', session: 'a3' },
      { person: 'b', at: T0 + HOUR, page: '/', channel: 'Paid Search', session: 'b1' },
      // A server-side event without a session: no touch.
      { person: 'c', at: T0 + HOUR, type: 'conversion', page: '/', session: null },
    ], { steps: [path('/'), path('/pricing')] });
    const all = await h.breakdown(site, id, { ...PERIOD, models: 'first_touch,last_touch,linear,u_shaped,time_decay' });
    expect(all.totals).toEqual({ entered: 3, completed: 1 });
    const row = (v: string) => all.data.find((r) => r['value'] === v) as Json;
    expect(row('Email')['first_touch']).toEqual({ entered: 1, completed: 1, conversion_rate: 1 });
    expect(row('Organic Search')['last_touch']).toEqual({ entered: 1, completed: 1, conversion_rate: 1 });
    expect((row('Email')['linear'] as Json)['entered']).toBeCloseTo(0.5, 12);
    expect((row('Organic Search')['time_decay'] as Json)['entered']).toBeGreaterThan((row('Email')['time_decay'] as Json)['entered'] as number);
    expect(row('Unattributed')['u_shaped']).toEqual({ entered: 1, completed: 0, conversion_rate: 0 });
    expect(all.data.find((r) => r['value'] === 'Referral')).toBeUndefined();
    const one = await h.breakdown(site, id, { ...PERIOD, models: 'linear', limit: '2' });
    expect(one.data.map((r) => r['value'])).toEqual(['Paid Search', 'Unattributed', 'Other']);
    expect(one.data[2]).toMatchObject({ other: true, entered: 1, completed: 1 });
    expect(one.meta).toMatchObject({ truncated: true, row_count: 3, dimension: 'channel', models: ['linear'] });
  });

  it('last_non_direct skips Direct touches (a journey of only Direct keeps its last)', async () => {
    const { site, id } = await setup([
      { person: 'a', at: T0 - 2 * DAY, page: '/blog', channel: 'Email', session: 'a1' },
      { person: 'a', at: T0 + HOUR, page: '/', channel: 'Direct', session: 'a2' },
      { person: 'b', at: T0 - DAY, page: '/blog', channel: 'Direct', session: 'b1' },
      { person: 'b', at: T0 + HOUR, page: '/', channel: 'Direct', session: 'b2' },
    ], { steps: [path('/'), path('/pricing')] });
    const r = await h.breakdown(site, id, { ...PERIOD, models: 'last_touch,last_non_direct' });
    const row = (v: string) => r.data.find((x) => x['value'] === v) as Json;
    expect(row('Direct')['last_touch']).toEqual({ entered: 2, completed: 0, conversion_rate: 0 });
    expect(row('Email')['last_non_direct']).toEqual({ entered: 1, completed: 0, conversion_rate: 0 });
    expect(row('Direct')['last_non_direct']).toEqual({ entered: 1, completed: 0, conversion_rate: 0 });
  });

  it('exclude_direct drops Direct touches before weighing (a journey of only Direct stays Direct)', async () => {
    const { site, id } = await setup([
      { person: 'a', at: T0 - 2 * DAY, page: '/blog', channel: 'Email', session: 'a1' },
      { person: 'a', at: T0 + HOUR, page: '/', channel: 'Direct', session: 'a2' },
      { person: 'a', at: T0 + 2 * HOUR, page: '/pricing', channel: 'Direct', session: 'a2' },
      { person: 'b', at: T0 - DAY, page: '/blog', channel: 'Direct', session: 'b1' },
      { person: 'b', at: T0 + HOUR, page: '/', channel: 'Direct', session: 'b2' },
    ], { steps: [path('/'), path('/pricing')] });
    const models = 'last_touch,linear,shapley';
    const kept = await h.breakdown(site, id, { ...PERIOD, models });
    const dropped = await h.breakdown(site, id, { ...PERIOD, models, exclude_direct: 'true' });
    const row = (r: { data: Json[] }, v: string) => r.data.find((x) => x['value'] === v) as Json;
    expect(row(kept, 'Direct')['last_touch']).toEqual({ entered: 2, completed: 1, conversion_rate: 0.5 });
    expect((row(kept, 'Email')['linear'] as Json)['entered']).toBeCloseTo(0.5, 12);
    expect(row(dropped, 'Email')['last_touch']).toEqual({ entered: 1, completed: 1, conversion_rate: 1 });
    expect(row(dropped, 'Email')['linear']).toEqual({ entered: 1, completed: 1, conversion_rate: 1 });
    expect(row(dropped, 'Email')['shapley']).toEqual({ entered: 1, completed: 1, conversion_rate: 1 });
    // b saw only Direct: it stays Direct.
    expect(row(dropped, 'Direct')['linear']).toEqual({ entered: 1, completed: 0, conversion_rate: 0 });
    expect(dropped.totals).toEqual(kept.totals);
    expect((dropped.meta['definitions'] as Json)['exclude_direct']).toMatch(/Direct touches were dropped/);
    expect((kept.meta['definitions'] as Json)['exclude_direct']).toBeUndefined();
  });
});

describe('data-driven breakdown', () => {
  // Journeys before entering (the entry is the page view of '/'; completing is '/pricing' after it):
  // a [Email] completes, b [Email, Paid Search] completes, c [Paid Search] does not, d has no touch
  // and completes.
  // markov, completing: start > Email 2, > Paid Search 1; Email > conversion 1, > Paid Search 1;
  // Paid Search > conversion 1, > null 1. P = 2/3 × 0.75 + 1/3 × 0.5 = 2/3; without Email 1/6
  // (removal effect 0.75), without Paid Search 1/3 (0.5): of the 2 completions with a touch, Email
  // 1.2 and Paid Search 0.8. Entering: every journey ends in conversion; without Email 1/3, without
  // Paid Search 1/3 (both 2/3): 1.5 each of the 3 entries with a touch.
  // shapley (each journey's people split evenly across its channels): entered Email 1 + 0.5,
  // Paid Search 0.5 + 1; completed Email 1.5, Paid Search 0.5.
  const journeys: EventSpec[] = [
    { person: 'a', at: T0 + HOUR, page: '/', channel: 'Email', session: 'a1' },
    { person: 'a', at: T0 + 2 * HOUR, page: '/pricing', channel: 'Email', session: 'a1' },
    { person: 'b', at: T0 - 2 * DAY, page: '/blog', channel: 'Email', session: 'b1' },
    { person: 'b', at: T0 + HOUR, page: '/', channel: 'Paid Search', session: 'b2' },
    { person: 'b', at: T0 + 2 * HOUR, page: '/pricing', channel: 'Paid Search', session: 'b2' },
    { person: 'c', at: T0 + HOUR, page: '/', channel: 'Paid Search', session: 'c1' },
    { person: 'd', at: T0 + HOUR, type: 'conversion', page: '/', session: null },
    { person: 'd', at: T0 + 2 * HOUR, type: 'conversion', page: '/pricing', session: null },
  ];
  const close = (got: unknown, want: { entered: number; completed: number }) => {
    const g = got as { entered: number; completed: number; conversion_rate: number };
    expect(g.entered).toBeCloseTo(want.entered, 9);
    expect(g.completed).toBeCloseTo(want.completed, 9);
    expect(g.conversion_rate).toBeCloseTo(want.completed / want.entered, 9);
  };

  it('markov and shapley credit entering and completing by their worked figures; Unattributed as under the rule models', async () => {
    const { site, id } = await setup(journeys, { steps: [path('/'), path('/pricing')] });
    const r = await h.breakdown(site, id, { ...PERIOD, models: 'markov,shapley,linear' });
    expect(r.totals).toEqual({ entered: 4, completed: 3 });
    const row = (v: string) => r.data.find((x) => x['value'] === v) as Json;
    close(row('Email')['markov'], { entered: 1.5, completed: 1.2 });
    close(row('Paid Search')['markov'], { entered: 1.5, completed: 0.8 });
    close(row('Email')['shapley'], { entered: 1.5, completed: 1.5 });
    close(row('Paid Search')['shapley'], { entered: 1.5, completed: 0.5 });
    for (const model of ['markov', 'shapley', 'linear']) {
      expect(row('Unattributed')[model]).toEqual({ entered: 1, completed: 1, conversion_rate: 1 });
      // Every model's rows add up to the totals.
      const sum = (k: 'entered' | 'completed') => r.data.reduce((a, x) => a + ((x[model] as Json)[k] as number), 0);
      expect(sum('entered')).toBeCloseTo(4, 9);
      expect(sum('completed')).toBeCloseTo(3, 9);
    }
    const definitions = r.meta['definitions'] as Record<string, string>;
    expect(definitions['markov']).toMatch(/removal effect/);
    expect(definitions['markov']).toMatch(/3 of the people who entered had a touch, 2 of them completed/);
    expect(definitions['shapley']).toMatch(/Exact: all 4 coalitions of the 2 channels enumerated/);
  });

  it('a column nobody with a touch reached is null, with the reason, never zero', async () => {
    const { site, id } = await setup(journeys.filter((e) => e.page !== '/pricing'), { steps: [path('/'), path('/pricing')] });
    const r = await h.breakdown(site, id, { ...PERIOD, models: 'markov,shapley' });
    expect(r.totals).toEqual({ entered: 4, completed: 0 });
    const row = (v: string) => r.data.find((x) => x['value'] === v) as Json;
    for (const model of ['markov', 'shapley']) {
      expect((row('Email')[model] as Json)['completed']).toBeNull();
      expect((row('Email')[model] as Json)['conversion_rate']).toBeNull();
      expect((row('Email')[model] as Json)['entered']).toBeGreaterThan(0);
    }
    const definitions = r.meta['definitions'] as Record<string, string>;
    expect(definitions['markov']).toMatch(/completed: null, no person with a touch completed/);
    expect(definitions['shapley']).toMatch(/completed: null, no person with a touch completed/);
  });

  it('folds values past limit into Other, and refuses other dimensions than channel', async () => {
    const { site, id } = await setup(journeys, { steps: [path('/'), path('/pricing')] });
    const one = await h.breakdown(site, id, { ...PERIOD, models: 'markov', limit: '1' });
    expect(one.data.map((x) => x['value'])).toEqual(['Email', 'Other']);
    expect(one.data[1]).toMatchObject({ other: true });
    expect(one.data.reduce((a, x) => a + (x['entered'] as number), 0)).toBeCloseTo(4, 9);
    const refused = await h.problem(h.breakdown(site, id, { ...PERIOD, dimension: 'source', models: 'linear,markov' }));
    expect(refused).toMatchObject({ kind: 'unsupported-combination', allowed: ['channel'] });
  });
});
