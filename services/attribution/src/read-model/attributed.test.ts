// conversion.attributed as the read model publishes it: once a conversion's first and last touch are
// computed, again when a late session, a merge or a backfill changes them, never when nothing
// changed, with an id that derives from the content, and retried after a failed publish.
import { randomUUID } from 'node:crypto';
import { MESSAGE_EXAMPLES, messageValidator, type ConversionCreatedV1 } from '@sightline/proto-schemas';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import { attributionHandlers } from '../index';

const CONVERTED_AT = '2026-03-05T09:00:00.000Z';
const DAY = 86_400_000;
const before = (ms: number): string => new Date(Date.parse(CONVERTED_AT) - ms).toISOString();

describe('conversion.attributed', () => {
  let fx: AttributionFixture;
  beforeAll(async () => { fx = await openFixture(); }, 60_000);
  afterAll(async () => { await fx?.close(); });

  const messagesOf = (c: ConversionCreatedV1) => fx.published.filter((m) => m.payload.conversion_id === c.conversion_id);

  async function visit(site: FixtureWebsite, identity: string, startedAt: string, channel: string, campaign: string | null = null): Promise<void> {
    await fx.deliver('events.classified', batch(site, [hit({ identity, session: randomUUID(), startedAt, channel, source: null, medium: null, campaign })]), site);
  }

  async function sale(site: FixtureWebsite, identity: string | null): Promise<ConversionCreatedV1> {
    const c = conversion(site, { identity_id: identity, anonymous_id: identity, occurred_at: CONVERTED_AT, revenue: 20 });
    await fx.deliver('conversion.created', c, site);
    return c;
  }

  it('publishes the computed first and last touch once, valid against the catalog schema', async () => {
    const site = newWebsite();
    const person = randomUUID();
    await visit(site, person, before(3 * DAY), 'Paid Search', 'spring');
    await visit(site, person, before(DAY), 'Email');
    const c = await sale(site, person);
    const [message, ...more] = messagesOf(c);
    expect(more).toEqual([]);
    expect(message?.payload).toEqual({
      conversion_id: c.conversion_id, website_id: site.id, workspace_id: site.workspace_id, touch_count: 2,
      first_touch: { occurred_at: before(3 * DAY), channel: 'Paid Search', source: null, medium: null, campaign: 'spring' },
      last_touch: { occurred_at: before(DAY), channel: 'Email', source: null, medium: null, campaign: null },
    });
    const envelope = { id: message?.id ?? '', type: 'conversion.attributed', version: 1, occurred_at: CONVERTED_AT, workspace_id: site.workspace_id, website_id: site.id, source: 'attribution', payload: message?.payload };
    expect(messageValidator.validateEnvelope(envelope)).toBeNull();

    // Redelivered, or recomputed by a fact that changes nothing (a written-back value): nothing new.
    await fx.deliver('conversion.created', c, site);
    await fx.deliver('conversion.value_changed', { ...MESSAGE_EXAMPLES['conversion.value_changed'], conversion_id: c.conversion_id, website_id: site.id, workspace_id: site.workspace_id, conversion_occurred_at: CONVERTED_AT }, site);
    await visit(site, person, new Date(Date.parse(CONVERTED_AT) + 60_000).toISOString(), 'Direct'); // after the conversion
    expect(messagesOf(c)).toHaveLength(1);
  });

  it('publishes again when a late session or a merged device changes a touch, with more touches each time', async () => {
    const site = newWebsite();
    const [phone, laptop] = [randomUUID(), randomUUID()];
    await visit(site, phone, before(DAY), 'Organic Search');
    const c = await sale(site, phone);
    // A backfilled session 90 days before the conversion is in its lookback: the first touch moves back.
    await visit(site, phone, before(90 * DAY), 'Referral');
    // One a millisecond further back is not.
    await visit(site, phone, before(90 * DAY + 1), 'Display');
    // The laptop's session just before the conversion becomes the person's once the devices merge.
    await visit(site, laptop, before(60_000), 'Paid Social');
    expect(messagesOf(c)).toHaveLength(2);
    await fx.deliver('identity.merged', { workspace_id: site.workspace_id, from_identity_id: laptop, into_identity_id: phone }, site);
    const published = messagesOf(c).map((m) => [m.payload.touch_count, m.payload.first_touch?.channel, m.payload.last_touch?.channel]);
    expect(published).toEqual([[1, 'Organic Search', 'Organic Search'], [2, 'Referral', 'Organic Search'], [3, 'Referral', 'Paid Social']]);
  });

  it('publishes nothing for a conversion without a journey', async () => {
    const site = newWebsite();
    const c = await sale(site, null);
    const known = await sale(site, randomUUID());
    expect([...messagesOf(c), ...messagesOf(known)]).toEqual([]);
  });

  it('computes every website of a coalesced group (their inserts are not mistaken for one another)', async () => {
    const sites = [newWebsite(), newWebsite(), newWebsite()];
    const people = sites.map(() => randomUUID());
    for (const [i, site] of sites.entries()) await visit(site, people[i] as string, before(DAY), 'Direct');
    const handler = fx.handlers.consumers['conversion.created'];
    // The first delivery starts a group alone; the two that arrive while it runs form the next group.
    const conversions = sites.map((site, i) => conversion(site, { identity_id: people[i] as string, occurred_at: CONVERTED_AT }));
    await Promise.all(conversions.map((c, i) => handler({
      id: randomUUID(), type: 'conversion.created', version: 1, occurred_at: CONVERTED_AT, workspace_id: (sites[i] as FixtureWebsite).workspace_id,
      website_id: (sites[i] as FixtureWebsite).id, source: 'test', payload: c,
    })));
    for (const [i, c] of conversions.entries()) {
      const rows = await fx.ch.query('SELECT touches FROM outcome_journeys FINAL WHERE website_id = {website:UUID} AND outcome_id = {id:String}', { website: (sites[i] as FixtureWebsite).id, id: c.conversion_id });
      expect(rows).toEqual([{ touches: 1 }]);
      expect(messagesOf(c)).toHaveLength(1);
    }
  });

  it('republishes the same message id after a failed publish', async () => {
    const site = newWebsite();
    const person = randomUUID();
    const sent: { id: string; touches: number }[] = [];
    let failNext = true;
    const { consumers } = attributionHandlers(fx.ch, async (messages) => {
      if (failNext) {
        failNext = false;
        throw new Error('broker unavailable');
      }
      sent.push(...messages.map((m) => ({ id: m.id, touches: m.payload.touch_count })));
    });
    await visit(site, person, before(DAY), 'Direct');
    const c = conversion(site, { identity_id: person, occurred_at: CONVERTED_AT });
    const envelope = { id: randomUUID(), type: 'conversion.created' as const, version: 1, occurred_at: CONVERTED_AT, workspace_id: site.workspace_id, website_id: site.id, source: 'test', payload: c };
    await expect(consumers['conversion.created'](envelope)).rejects.toThrow('broker unavailable');
    await consumers['conversion.created'](envelope); // the bus redelivers
    expect(sent).toHaveLength(1);
    // The same content computed again (here by a rebuild, whose first publish went through) carries the same id.
    const rebuilt: string[] = [];
    const fresh = attributionHandlers(fx.ch, async (messages) => void rebuilt.push(...messages.map((m) => m.id)));
    await fx.ch.command('ALTER TABLE attributed_published DELETE WHERE website_id = {website:UUID} SETTINGS mutations_sync = 1', { website: site.id });
    await fresh.readModel.rebuild({ websiteId: site.id, workspaceId: site.workspace_id });
    expect(rebuilt).toEqual([sent[0]?.id]);
  });
});
