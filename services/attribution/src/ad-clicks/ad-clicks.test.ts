// attribution.getAdClicks over embedded chDB with the real migrations: visits are delivered
// through the module's own consumers, then one call answers the person's click ids in a window.
import { randomUUID } from 'node:crypto';
import { messageValidator, type AdClicksRequest, type AdClicksResponse } from '@sightline/proto-schemas';
import { batch, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';

const DAY = 86_400_000;
const UNTIL = Date.parse('2025-06-30T12:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const daysBefore = (n: number): string => iso(UNTIL - n * DAY);

describe('attribution.getAdClicks', () => {
  let fx: AttributionFixture;
  let website: FixtureWebsite;
  const ids = { phone: randomUUID(), laptop: randomUUID(), other: randomUUID(), plain: randomUUID() };

  const ask = async (identity: string, since: string, until: string, site: FixtureWebsite = website): Promise<AdClicksResponse> => {
    const request: AdClicksRequest = { workspace_id: site.workspace_id, website_id: site.id, identity_id: identity, since, until };
    expect(messageValidator.validateRpcRequest('attribution.getAdClicks', request)).toBeNull();
    const handler = fx.handlers.rpc['attribution.getAdClicks'];
    if (!handler) throw new Error('attribution does not answer attribution.getAdClicks');
    const response = await handler(request);
    expect(messageValidator.validateRpcResponse('attribution.getAdClicks', response)).toBeNull();
    return response as AdClicksResponse;
  };

  beforeAll(async () => {
    fx = await openFixture();
    website = newWebsite();
    await fx.deliver('events.classified', batch(website, [
      // On the phone: a Google click 60 days back, seen again on a second page 5 minutes later.
      hit({ identity: ids.phone, session: 'p1', startedAt: daysBefore(60), clickIds: { gclid: 'g-old' } }),
      hit({ identity: ids.phone, session: 'p1', startedAt: daysBefore(60), minutes: 5, clickIds: { gclid: 'g-old' } }),
      // On the laptop (merged into the phone's person below): a newer Google click and a Meta ad.
      hit({ identity: ids.laptop, session: 'l1', startedAt: daysBefore(20), clickIds: { gclid: 'g-new', wbraid: 'w-1' } }),
      hit({ identity: ids.laptop, session: 'l2', startedAt: daysBefore(3), clickIds: { fbclid: 'IwAR-meta' } }),
      // A LinkedIn ad after the window's end, and a visit with no click id.
      hit({ identity: ids.laptop, session: 'l3', startedAt: iso(UNTIL + 1), clickIds: { li_fat_id: 'li-late' } }),
      hit({ identity: ids.laptop, session: 'l4', startedAt: daysBefore(1), clickIds: {} }),
      // Someone else's click.
      hit({ identity: ids.other, session: 'o1', startedAt: daysBefore(2), clickIds: { gclid: 'g-other' } }),
      hit({ identity: ids.plain, session: 'n1', startedAt: daysBefore(2) }),
    ]), website);
    await fx.deliver('identity.merged', { workspace_id: website.workspace_id, from_identity_id: ids.phone, into_identity_id: ids.laptop }, website);
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  it('gives the newest value of each click id name across the merged devices, with the click time, newest first', async () => {
    const { clicks } = await ask(ids.phone, daysBefore(90), iso(UNTIL));
    expect(clicks).toEqual([
      { name: 'fbclid', value: 'IwAR-meta', occurred_at: daysBefore(3) },
      { name: 'gclid', value: 'g-new', occurred_at: daysBefore(20) },
      { name: 'wbraid', value: 'w-1', occurred_at: daysBefore(20) },
    ]);
    // Asked by the other device of the same person: the same answer.
    expect((await ask(ids.laptop, daysBefore(90), iso(UNTIL))).clicks).toEqual(clicks);
  });

  it('bounds the window at both ends, inclusively, and dates a repeated value by its first event', async () => {
    // The old click alone: the window ends one millisecond before the newer Google click.
    const old = await ask(ids.phone, daysBefore(60), iso(UNTIL - 20 * DAY - 1));
    expect(old.clicks).toEqual([{ name: 'gclid', value: 'g-old', occurred_at: daysBefore(60) }]);
    // Starting one millisecond after the first page of that click: only its second page counts.
    const second = await ask(ids.phone, iso(UNTIL - 60 * DAY + 1), iso(UNTIL - 20 * DAY - 1));
    expect(second.clicks).toEqual([{ name: 'gclid', value: 'g-old', occurred_at: iso(UNTIL - 60 * DAY + 5 * 60_000) }]);
    // The window ending exactly at the LinkedIn click includes it; one millisecond before does not.
    expect((await ask(ids.laptop, iso(UNTIL), iso(UNTIL + 1))).clicks).toEqual([{ name: 'li_fat_id', value: 'li-late', occurred_at: iso(UNTIL + 1) }]);
    expect((await ask(ids.laptop, iso(UNTIL), iso(UNTIL))).clicks).toEqual([]);
  });

  it('answers nothing for a person without clicks, an empty or reversed window, and another website', async () => {
    expect((await ask(ids.plain, daysBefore(90), iso(UNTIL))).clicks).toEqual([]);
    expect((await ask(randomUUID(), daysBefore(90), iso(UNTIL))).clicks).toEqual([]);
    expect((await ask(ids.phone, iso(UNTIL), daysBefore(90))).clicks).toEqual([]);
    expect((await ask(ids.phone, daysBefore(90), iso(UNTIL), newWebsite())).clicks).toEqual([]);
    expect((await ask(ids.other, daysBefore(90), iso(UNTIL))).clicks).toEqual([{ name: 'gclid', value: 'g-other', occurred_at: daysBefore(2) }]);
  });
});
