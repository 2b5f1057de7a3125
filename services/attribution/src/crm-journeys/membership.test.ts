// Who is on a company or deal: crm.members_synced replaces the list (newest synced_at wins, in
// whatever order the syncs arrive), and each member is tied to a visitor by identity id, contact
// id or email. Embedded chDB with the real migrations.
import { randomUUID } from 'node:crypto';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import { daysAgo, journey, sync } from '../../test/crm-journeys.fixtures';

describe('attribution: CRM membership of companies and deals (chDB)', () => {
  let fx: AttributionFixture;
  beforeAll(async () => {
    fx = await openFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  /** A website with one visitor per identity, each with one session 10 days ago. */
  async function siteWithVisitors(...identities: string[]): Promise<FixtureWebsite> {
    const website = newWebsite();
    const events = identities.map((identity, i) => hit({ identity, session: `s-${identity}`, startedAt: daysAgo(10, i) }));
    await fx.deliver('events.classified', batch(website, events), website);
    return website;
  }

  const people = async (website: FixtureWebsite, id: string, subject: 'company' | 'deal' = 'company'): Promise<string[]> =>
    (await journey(fx, website, { subject, id })).body.people.map((p) => p.identity_id);

  it('a later sync replaces the member list', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const website = await siteWithVisitors(a, b, c);
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ identity_id: a }, { identity_id: b }], syncedAt: daysAgo(2) });
    expect(await people(website, company)).toEqual([a, b].sort());
    await sync(fx, website, { id: company, members: [{ identity_id: b }, { identity_id: c }], syncedAt: daysAgo(1) });
    const { body } = await journey(fx, website, { id: company });
    expect(body.people.map((p) => p.identity_id)).toEqual([b, c].sort());
    expect(body.data.map((s) => s.identity_id).sort()).toEqual([b, c].sort());
    expect(body.members_total).toBe(2);
  });

  it('an empty list removes everyone but the company still answers', async () => {
    const a = randomUUID();
    const website = await siteWithVisitors(a);
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ identity_id: a }], syncedAt: daysAgo(2) });
    await sync(fx, website, { id: company, members: [], syncedAt: daysAgo(1) });
    const { status, body } = await journey(fx, website, { id: company });
    expect(status).toBe(200);
    expect(body).toMatchObject({ data: [], people_count: 0, members_total: 0, members_unresolved: 0, synthetic: false });
    expect(body.meta.note).toContain('nobody');
  });

  it('an older sync arriving after a newer one does not win', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const website = await siteWithVisitors(a, b, c);
    const company = randomUUID();
    await sync(fx, website, { id: company, name: 'New name', members: [{ identity_id: a }, { identity_id: b }], syncedAt: daysAgo(1) });
    await sync(fx, website, { id: company, name: 'Old name', members: [{ identity_id: c }], syncedAt: daysAgo(3) });
    const { body } = await journey(fx, website, { id: company });
    expect(body.people.map((p) => p.identity_id)).toEqual([a, b].sort());
    expect(body.name).toBe('New name');
    expect(body.synced_at).toBe(new Date(Date.parse(body.synced_at)).toISOString());
    // An older empty list cannot remove anyone either.
    await sync(fx, website, { id: company, members: [], syncedAt: daysAgo(5) });
    expect(await people(website, company)).toEqual([a, b].sort());
  });

  it('two different lists synced at the same instant give one answer whatever their arrival order', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const website = await siteWithVisitors(a, b);
    const syncedAt = daysAgo(1);
    const [first, second] = [randomUUID(), randomUUID()];
    await sync(fx, website, { id: first, members: [{ identity_id: a }], syncedAt });
    await sync(fx, website, { id: first, members: [{ identity_id: b }], syncedAt });
    await sync(fx, website, { id: second, members: [{ identity_id: b }], syncedAt });
    await sync(fx, website, { id: second, members: [{ identity_id: a }], syncedAt });
    expect(await people(website, first)).toEqual(await people(website, second));
  });

  it('a redelivered sync and repeated members count once', async () => {
    const a = randomUUID();
    const website = await siteWithVisitors(a);
    const company = randomUUID();
    const syncedAt = daysAgo(1);
    const members = [{ identity_id: a }, { identity_id: a }, { email: 'Ada@Example.com' }, { email: ' ada@example.com ' }];
    await sync(fx, website, { id: company, members, syncedAt });
    await sync(fx, website, { id: company, members, syncedAt });
    const { body } = await journey(fx, website, { id: company });
    // Two distinct members (the identity, the email); the email matches no contact.
    expect(body.members_total).toBe(2);
    expect(body.members_unresolved).toBe(1);
    expect(body.people_count).toBe(1);
    expect(body.data).toHaveLength(1);
  });

  it('companies and deals with the same id are kept apart, and syncs stay on their website', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const website = await siteWithVisitors(a, b);
    const other = newWebsite({ workspace_id: website.workspace_id });
    const id = randomUUID();
    await sync(fx, website, { subject: 'company', id, members: [{ identity_id: a }] });
    await sync(fx, website, { subject: 'deal', id, members: [{ identity_id: b }] });
    expect(await people(website, id, 'company')).toEqual([a]);
    expect(await people(website, id, 'deal')).toEqual([b]);
    await expect(journey(fx, other, { id })).rejects.toMatchObject({ kind: 'not-found', status: 404 });
  });

  it('resolves members by identity id, else contact id, else email (case-insensitive)', async () => {
    const [byIdentity, byContact, byEmail, stale] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const website = await siteWithVisitors(byIdentity, byContact, byEmail);
    const contact = conversion(website, { identity_id: byContact, email: 'grace@corp.example', occurred_at: daysAgo(9) });
    await fx.deliver('conversion.created', contact, website);
    // Two contacts share an email: the newest one's identity is the member's.
    await fx.deliver('conversion.created', conversion(website, { identity_id: stale, email: 'Linus@Corp.example', occurred_at: daysAgo(20) }), website);
    await fx.deliver('conversion.created', conversion(website, { identity_id: byEmail, email: 'linus@corp.example', occurred_at: daysAgo(8) }), website);
    // A contact without a visitor resolves nothing.
    const imported = conversion(website, { identity_id: null, email: 'ken@corp.example', occurred_at: daysAgo(7), origin: 'import' });
    await fx.deliver('conversion.created', imported, website);
    const company = randomUUID();
    await sync(fx, website, {
      id: company,
      members: [
        { identity_id: byIdentity, email: 'ada@corp.example' },
        { conversion_id: contact.conversion_id },
        { email: 'LINUS@corp.example' },
        { conversion_id: imported.conversion_id, email: 'ken@corp.example' },
        { email: 'nobody@corp.example', conversion_id: randomUUID() },
        { conversion_id: 'not-a-uuid' },
      ],
    });
    const { body } = await journey(fx, website, { id: company });
    expect(body.members_total).toBe(6);
    expect(body.members_unresolved).toBe(3);
    expect(body.people).toEqual(
      [
        { identity_id: byIdentity, emails: ['ada@corp.example'] },
        // No email on the member: the contact's own email is shown.
        { identity_id: byContact, emails: ['grace@corp.example'] },
        { identity_id: byEmail, emails: ['linus@corp.example'] },
      ].sort((x, y) => x.identity_id.localeCompare(y.identity_id)),
    );
    expect(body.data.map((s) => s.identity_id).sort()).toEqual([byIdentity, byContact, byEmail].sort());
  });

  it('a company whose members resolve to nobody answers an empty timeline with a note', async () => {
    const website = newWebsite();
    const company = randomUUID();
    await sync(fx, website, { id: company, members: [{ email: 'x@nowhere.example' }, { conversion_id: randomUUID() }] });
    const { status, body } = await journey(fx, website, { id: company });
    expect(status).toBe(200);
    expect(body).toMatchObject({ data: [], synthetic: false, people_count: 0, members_total: 2, members_unresolved: 2 });
    expect(body.meta.note).toContain('None of the 2 members');
  });
});
