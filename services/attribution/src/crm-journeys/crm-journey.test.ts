// Company and deal journeys end to end on embedded chDB: people merged through the identity graph,
// their sessions interleaved in time order, the days/limit window, email masking by key scope,
// the synthetic fallback, 404s, and conformance to the OpenAPI JourneyResponse.
import { randomUUID } from 'node:crypto';
import { ConversionsRepo } from '../conversions.repo';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import { daysAgo, journey, journeyResponseErrors, sync } from '../../test/crm-journeys.fixtures';

describe('attribution: company and deal journeys (chDB)', () => {
  let fx: AttributionFixture;
  beforeAll(async () => {
    fx = await openFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  const merge = (website: FixtureWebsite, from: string, into: string): Promise<void> =>
    fx.deliver('identity.merged', { workspace_id: website.workspace_id, from_identity_id: from, into_identity_id: into }, website);

  it('interleaves the sessions of several people in time order, each saying whose it is', async () => {
    const website = newWebsite();
    const [ada, grace] = [randomUUID(), randomUUID()];
    await fx.deliver(
      'events.classified',
      batch(website, [
        hit({ identity: ada, session: 'ada-1', startedAt: daysAgo(30), channel: 'Paid Search' }),
        hit({ identity: ada, session: 'ada-1', startedAt: daysAgo(30), minutes: 3, type: 'form_submit', page: '/demo' }),
        hit({ identity: grace, session: 'grace-1', startedAt: daysAgo(20), channel: 'Organic Social' }),
        hit({ identity: ada, session: 'ada-2', startedAt: daysAgo(10), channel: 'Direct' }),
        hit({ identity: grace, session: 'grace-2', startedAt: daysAgo(5), channel: 'Email' }),
      ]),
      website,
    );
    const company = randomUUID();
    await sync(fx, website, { id: company, name: 'Analytical Engines Ltd', members: [{ identity_id: ada, email: 'ada@engines.example' }, { identity_id: grace, email: 'grace@engines.example' }] });

    const { status, body } = await journey(fx, website, { id: company });
    expect(status).toBe(200);
    expect(journeyResponseErrors(body)).toEqual([]);
    expect(body.data.map((s) => [s.session_id, s.identity_id, s.email, s.channel])).toEqual([
      ['ada-1', ada, 'ada@engines.example', 'Paid Search'],
      ['grace-1', grace, 'grace@engines.example', 'Organic Social'],
      ['ada-2', ada, 'ada@engines.example', 'Direct'],
      ['grace-2', grace, 'grace@engines.example', 'Email'],
    ]);
    expect(body.data[0]?.events.map((e) => e.event_type)).toEqual(['pageview', 'form_submit']);
    expect(body).toMatchObject({ company_id: company, name: 'Analytical Engines Ltd', synthetic: false, people_count: 2, members_total: 2, members_unresolved: 0 });
    expect(body).not.toHaveProperty('deal_id');
    expect(body.meta).toMatchObject({ website_id: website.id, website: website.domain, row_count: 4, truncated: false, pii_included: true });
    expect(body.meta.window.expression).toBeNull();
    expect(body.meta).not.toHaveProperty('note');
  });

  it('merges devices and members through the identity graph before counting people', async () => {
    const website = newWebsite();
    const [laptop, phone, work, colleague] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await fx.deliver(
      'events.classified',
      batch(website, [
        hit({ identity: laptop, session: 'laptop-1', startedAt: daysAgo(12) }),
        hit({ identity: phone, session: 'phone-1', startedAt: daysAgo(11) }),
        hit({ identity: work, session: 'work-1', startedAt: daysAgo(9) }),
        hit({ identity: colleague, session: 'colleague-1', startedAt: daysAgo(8) }),
      ]),
      website,
    );
    // The CRM lists Ada twice (her laptop identity and her work email's contact) and a colleague.
    await fx.deliver('conversion.created', conversion(website, { identity_id: work, email: 'ada@work.example', occurred_at: daysAgo(9) }), website);
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ identity_id: laptop }, { email: 'ada@work.example' }, { identity_id: colleague, email: 'bob@work.example' }] });
    const before = (await journey(fx, website, { id: company })).body;
    expect(before.people_count).toBe(3);
    expect(before.data.map((s) => s.session_id)).toEqual(['laptop-1', 'work-1', 'colleague-1']);

    // The phone (never listed) and the work identity both merge into the laptop's.
    await merge(website, phone, laptop);
    await merge(website, work, laptop);
    const { body } = await journey(fx, website, { id: company });
    expect(body.people_count).toBe(2);
    expect(body.members_total).toBe(3);
    expect(body.people).toEqual(
      [
        { identity_id: laptop, emails: ['ada@work.example'] },
        { identity_id: colleague, emails: ['bob@work.example'] },
      ].sort((a, b) => a.identity_id.localeCompare(b.identity_id)),
    );
    expect(body.data.map((s) => [s.session_id, s.identity_id, s.email])).toEqual([
      ['laptop-1', laptop, 'ada@work.example'],
      ['phone-1', laptop, 'ada@work.example'],
      ['work-1', laptop, 'ada@work.example'],
      ['colleague-1', colleague, 'bob@work.example'],
    ]);
  });

  it('names a person by the id its group is known by now, even when the listed id was merged away', async () => {
    const website = newWebsite();
    const [listed, desk] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(website, [hit({ identity: listed, session: 'listed-1', startedAt: daysAgo(4) })]), website);
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ identity_id: listed, email: 'ada@engines.example' }] });
    await merge(website, listed, desk);
    const { body } = await journey(fx, website, { id: company });
    expect(body.people).toEqual([{ identity_id: desk, emails: ['ada@engines.example'] }]);
    expect(body.data.map((s) => [s.session_id, s.identity_id])).toEqual([['listed-1', desk]]);
  });

  describe('window', () => {
    let website: FixtureWebsite;
    const deal = randomUUID();
    const person = randomUUID();
    beforeAll(async () => {
      website = newWebsite();
      const ages = [400, 200, 60, 30, 3];
      await fx.deliver('events.classified', batch(website, ages.map((age) => hit({ identity: person, session: `d${age}`, startedAt: daysAgo(age) }))), website);
      await sync(fx, website, { subject: 'deal', id: deal, name: 'Renewal 2026', members: [{ identity_id: person }] });
    });

    it('reaches back 365 days from now by default', async () => {
      const { body } = await journey(fx, website, { subject: 'deal', id: deal });
      expect(body.data.map((s) => s.session_id)).toEqual(['d200', 'd60', 'd30', 'd3']);
      expect(body).toMatchObject({ deal_id: deal, name: 'Renewal 2026', people_count: 1 });
      expect(body).not.toHaveProperty('company_id');
      const span = Date.parse(body.meta.window.to) - Date.parse(body.meta.window.from);
      expect(span).toBe(365 * 86_400_000);
      expect(Math.abs(Date.parse(body.meta.window.to) - Date.now())).toBeLessThan(60_000);
      expect(journeyResponseErrors(body)).toEqual([]);
    });

    it('days narrows the window and limit keeps the newest sessions, flagging truncation', async () => {
      expect((await journey(fx, website, { subject: 'deal', id: deal, query: { days: 45 } })).body.data.map((s) => s.session_id)).toEqual(['d30', 'd3']);
      const { body } = await journey(fx, website, { subject: 'deal', id: deal, query: { days: 730, limit: 2 } });
      expect(body.data.map((s) => s.session_id)).toEqual(['d30', 'd3']);
      expect(body.meta).toMatchObject({ row_count: 2, truncated: true });
      const exact = (await journey(fx, website, { subject: 'deal', id: deal, query: { days: 730, limit: 5 } })).body;
      expect(exact.data).toHaveLength(5);
      expect(exact.meta.truncated).toBe(false);
    });

    it('days beyond the maximum is window-too-large', async () => {
      await expect(journey(fx, website, { subject: 'deal', id: deal, query: { days: 731 } })).rejects.toMatchObject({ kind: 'window-too-large', status: 400 });
      await expect(journey(fx, website, { subject: 'deal', id: deal, query: { days: 0 } })).rejects.toMatchObject({ kind: 'window-too-large' });
    });
  });

  it('masks member emails unless the key has pii:read, keeping the domain', async () => {
    const website = newWebsite();
    const ada = randomUUID();
    await fx.deliver('events.classified', batch(website, [hit({ identity: ada, session: 'm-1', startedAt: daysAgo(2) })]), website);
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ identity_id: ada, email: 'ada@engines.example' }] });

    const masked = (await journey(fx, website, { id: company, scopes: ['deals:read'] })).body;
    expect(masked.data[0]?.email).toBe('a***@engines.example');
    expect(masked.people).toEqual([{ identity_id: ada, emails: ['a***@engines.example'] }]);
    expect(masked.meta.pii_included).toBe(false);
    expect(masked.meta.pii_note).toContain('pii:read');
    expect(JSON.stringify(masked)).not.toContain('ada@engines.example');
    expect(journeyResponseErrors(masked)).toEqual([]);

    const full = (await journey(fx, website, { id: company, scopes: ['deals:read', 'pii:read'] })).body;
    expect(full.data[0]?.email).toBe('ada@engines.example');
    expect(full.meta.pii_included).toBe(true);
    expect(full.meta).not.toHaveProperty('pii_note');
  });

  it('rebuilds the timeline from stored touches when none of the people has browsing history', async () => {
    const website = newWebsite();
    const [ada, grace] = [randomUUID(), randomUUID()];
    const conversions = new ConversionsRepo(fx.ch);
    const touch = (at: string, channel: string, campaign: string | null = null) => ({ at, channel, source: 'crm', medium: null, campaign });
    const spring = touch(daysAgo(40), 'Paid Search', 'spring');
    await conversions.insert(randomUUID(), conversion(website, { identity_id: ada, email: 'ada@engines.example', occurred_at: daysAgo(10), origin: 'import' }), {
      first: spring,
      last: touch(daysAgo(11), 'Email'),
    });
    // A second conversion of Ada with the same first touch adds only its new last touch.
    await conversions.insert(randomUUID(), conversion(website, { identity_id: ada, email: 'ada@engines.example', occurred_at: daysAgo(5), origin: 'import' }), {
      first: spring,
      last: touch(daysAgo(6), 'Referral'),
    });
    await conversions.insert(randomUUID(), conversion(website, { identity_id: grace, email: 'grace@engines.example', occurred_at: daysAgo(20), origin: 'import' }), {
      first: touch(daysAgo(25), 'Organic Search'),
    });
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ email: 'ada@engines.example' }, { email: 'grace@engines.example' }] });

    const { body } = await journey(fx, website, { id: company });
    expect(body.synthetic).toBe(true);
    expect(body.people_count).toBe(2);
    expect(body.data.map((s) => [s.identity_id, s.channel, s.touch, s.session_id, s.events])).toEqual([
      [ada, 'Paid Search', 'first', null, []],
      [grace, 'Organic Search', 'first', null, []],
      [ada, 'Email', 'last', null, []],
      [ada, 'Referral', 'last', null, []],
    ]);
    expect(body.meta.note).toContain('not a complete history');
    expect(journeyResponseErrors(body)).toEqual([]);

    const narrow = (await journey(fx, website, { id: company, query: { days: 30 } })).body;
    expect(narrow.data.map((s) => s.channel)).toEqual(['Organic Search', 'Email', 'Referral']);
  });

  it('an unknown company or deal is 404 not-found pointing at the CRM lists', async () => {
    const website = newWebsite();
    const company = randomUUID();
    await sync(fx, website, { subject: 'company', id: company, members: [] });
    await expect(journey(fx, website, { id: randomUUID() })).rejects.toMatchObject({
      kind: 'not-found',
      status: 404,
      remediation: expect.stringContaining('GET /companies'),
    });
    // A company id is not a deal id.
    await expect(journey(fx, website, { subject: 'deal', id: company })).rejects.toMatchObject({
      kind: 'not-found',
      remediation: expect.stringMatching(/GET \/deals.*connect/),
    });
  });
});
