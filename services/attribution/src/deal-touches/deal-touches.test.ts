// attribution.getDealTouches over embedded chDB with the real migrations: browsing, conversions and
// merges are delivered through the module's own consumers, then one call answers a page of deals.
import { randomUUID } from 'node:crypto';
import { messageValidator, type DealTouchesRequest, type DealTouchesResponse } from '@sightline/proto-schemas';
import { ConversionsRepo } from '../conversions.repo';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';

const DAY = 86_400_000;
const DEAL_AT = Date.parse('2025-03-20T12:00:00.000Z');
const daysBefore = (n: number): string => new Date(DEAL_AT - n * DAY).toISOString();

describe('attribution.getDealTouches', () => {
  let fx: AttributionFixture;
  let website: FixtureWebsite;
  const ids = { alice: randomUUID(), bobPhone: randomUUID(), bobLaptop: randomUUID(), carol: randomUUID() };
  const conversions: Record<string, string> = {};

  const ask = async (deals: DealTouchesRequest['deals']): Promise<DealTouchesResponse> => {
    const request: DealTouchesRequest = { workspace_id: website.workspace_id, website_id: website.id, deals };
    expect(messageValidator.validateRpcRequest('attribution.getDealTouches', request)).toBeNull();
    const handler = fx.handlers.rpc['attribution.getDealTouches'];
    if (!handler) throw new Error('attribution does not answer attribution.getDealTouches');
    const response = await handler(request);
    expect(messageValidator.validateRpcResponse('attribution.getDealTouches', response)).toBeNull();
    return response as DealTouchesResponse;
  };
  const convert = async (key: string, identity: string | null, email: string, at: string): Promise<void> => {
    const c = conversion(website, { identity_id: identity, anonymous_id: identity, email, occurred_at: at });
    conversions[key] = c.conversion_id;
    await fx.deliver('conversion.created', c, website);
  };

  beforeAll(async () => {
    fx = await openFixture();
    website = newWebsite();
    await fx.deliver('events.classified', batch(website, [
      // Alice: an ad click ten days before the deal, a newsletter two days before, a visit after it.
      hit({ identity: ids.alice, session: 'a1', startedAt: daysBefore(10), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring' }),
      hit({ identity: ids.alice, session: 'a2', startedAt: daysBefore(2), channel: 'Email', source: 'newsletter', medium: 'email', campaign: null }),
      hit({ identity: ids.alice, session: 'a3', startedAt: daysBefore(-1), channel: 'Direct', source: null, medium: null, campaign: null }),
      // Bob browsed first on his phone, then converted on his laptop; the devices merge later.
      hit({ identity: ids.bobPhone, session: 'b1', startedAt: daysBefore(30), channel: 'Organic Social', source: 'linkedin', medium: null, campaign: null }),
      hit({ identity: ids.bobLaptop, session: 'b2', startedAt: daysBefore(5), channel: 'Referral', source: 'partner.example', medium: 'referral', campaign: null }),
      // Carol's only visit is after the deal was created.
      hit({ identity: ids.carol, session: 'c1', startedAt: daysBefore(-3), channel: 'Direct', source: null, medium: null, campaign: null }),
    ]), website);
    await convert('alice-old', ids.alice, 'Alice@Acme.test', daysBefore(4));
    await convert('alice-new', ids.alice, 'alice@acme.test', daysBefore(1));
    await convert('bob', ids.bobLaptop, 'bob@acme.test', daysBefore(3.5));
    await convert('carol', ids.carol, 'carol@acme.test', daysBefore(-3));
    await convert('dave', null, 'dave@acme.test', daysBefore(3));
    await fx.deliver('identity.merged', { workspace_id: website.workspace_id, from_identity_id: ids.bobPhone, into_identity_id: ids.bobLaptop }, website);
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  it('gives the earliest and the latest session before the deal was created, and the contacts newest first', async () => {
    const { deals } = await ask([{ deal_id: 'd-alice', emails: [' ALICE@acme.test '], created_at: new Date(DEAL_AT).toISOString() }]);
    expect(deals).toEqual([{
      deal_id: 'd-alice',
      basis: 'sessions',
      contact_ids: [conversions['alice-new'], conversions['alice-old']],
      first_touch: expect.objectContaining({ occurred_at: daysBefore(10), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring' }),
      last_touch: expect.objectContaining({ occurred_at: daysBefore(2), channel: 'Email', source: 'newsletter', medium: 'email', campaign: null }),
    }]);
  });

  it('follows a person across merged devices, and combines every contact of the deal', async () => {
    const { deals } = await ask([
      { deal_id: 'd-bob', emails: ['bob@acme.test'], created_at: new Date(DEAL_AT).toISOString() },
      { deal_id: 'd-both', emails: ['alice@acme.test', 'bob@acme.test'], created_at: new Date(DEAL_AT).toISOString() },
    ]);
    expect(deals.map((d) => d.deal_id)).toEqual(['d-bob', 'd-both']);
    expect(deals[0]).toMatchObject({ basis: 'sessions', first_touch: { channel: 'Organic Social', source: 'linkedin' }, last_touch: { channel: 'Referral' } });
    expect(deals[1]).toMatchObject({ first_touch: { channel: 'Organic Social' }, last_touch: { channel: 'Email' } });
    expect(deals[1]?.contact_ids).toEqual([conversions['alice-new'], conversions['bob'], conversions['alice-old']]);
  });

  it('bounds each deal by its own creation time', async () => {
    const { deals } = await ask([
      { deal_id: 'early', emails: ['alice@acme.test'], created_at: daysBefore(9) },
      { deal_id: 'later', emails: ['alice@acme.test'], created_at: daysBefore(-2) },
      { deal_id: 'before-any', emails: ['alice@acme.test'], created_at: daysBefore(20) },
    ]);
    expect(deals[0]).toMatchObject({ first_touch: { channel: 'Paid Search' }, last_touch: { channel: 'Paid Search' } });
    expect(deals[1]).toMatchObject({ first_touch: { channel: 'Paid Search' }, last_touch: { channel: 'Direct' } });
    expect(deals[2]).toMatchObject({ basis: 'no_touch_before_deal', first_touch: null, last_touch: null });
  });

  it('says why a deal has no touches', async () => {
    const at = new Date(DEAL_AT).toISOString();
    const { deals } = await ask([
      { deal_id: 'none', emails: [], created_at: at },
      { deal_id: 'stranger', emails: ['nobody@else.test'], created_at: at },
      { deal_id: 'carol', emails: ['carol@acme.test'], created_at: at },
      { deal_id: 'dave', emails: ['dave@acme.test'], created_at: at },
    ]);
    expect(deals.map((d) => [d.deal_id, d.basis, d.first_touch, d.last_touch])).toEqual([
      ['none', 'no_contacts', null, null],
      ['stranger', 'no_matching_contact', null, null],
      ['carol', 'no_touch_before_deal', null, null],
      ['dave', 'no_touch_before_deal', null, null],
    ]);
    expect(deals[3]?.contact_ids).toEqual([conversions['dave']]);
  });

  it('falls back to the touches stored with an imported contact that has no browsing history', async () => {
    const imported = conversion(website, { identity_id: null, anonymous_id: null, email: 'erin@acme.test', occurred_at: daysBefore(6), origin: 'import' });
    await new ConversionsRepo(fx.ch).insert(randomUUID(), imported, {
      first: { at: daysBefore(40), channel: 'Paid Social', source: 'facebook', medium: 'paid', campaign: 'launch' },
      last: { at: daysBefore(7), channel: 'Email', source: 'crm', medium: 'email', campaign: null },
    });
    const { deals } = await ask([
      { deal_id: 'erin', emails: ['erin@acme.test'], created_at: new Date(DEAL_AT).toISOString() },
      { deal_id: 'erin-early', emails: ['erin@acme.test'], created_at: daysBefore(50) },
    ]);
    expect(deals[0]).toMatchObject({
      basis: 'stored_touches',
      contact_ids: [imported.conversion_id],
      first_touch: { occurred_at: daysBefore(40), channel: 'Paid Social', source: 'facebook', campaign: 'launch', landing_page: null },
      last_touch: { occurred_at: daysBefore(7), channel: 'Email' },
    });
    expect(deals[1]).toMatchObject({ basis: 'no_touch_before_deal', first_touch: null });
  });

  it('answers an empty page, and keeps other websites out', async () => {
    expect(await ask([])).toEqual({ deals: [] });
    const other = newWebsite();
    const request: DealTouchesRequest = { workspace_id: other.workspace_id, website_id: other.id, deals: [{ deal_id: 'x', emails: ['alice@acme.test'], created_at: new Date(DEAL_AT).toISOString() }] };
    const handler = fx.handlers.rpc['attribution.getDealTouches'];
    expect((await handler(request)).deals[0]).toMatchObject({ basis: 'no_matching_contact', contact_ids: [] });
  });
});
