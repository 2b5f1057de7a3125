// The workspace's four analytics slots are shared by people's requests and background work (alert
// gathering, over gateway.acquireAnalyticsSlot): background work holds at most its share, people
// always keep the rest, any replica releases a lease by its id, and a lease nobody releases lapses.
// On the in-memory KV and on Redis; two Limits over one KV stand for two gateway replicas.
import { randomUUID } from 'node:crypto';
import { createMemoryKv, createRedisKv } from '@sightline/kit/stores';
import { TEST_SERVERS, requireServer, uniqueName } from '@sightline/kit/testing/servers';
import type { KvStore, SemaphoreLease } from '@sightline/kit';
import { BACKGROUND_ANALYTICS_QUERIES, CONCURRENT_ANALYTICS_QUERIES, Limits } from './limits';

const refused = (): void => undefined;

describe.each([
  ['in-memory KV', async (): Promise<KvStore> => createMemoryKv()],
  ['Redis', async (): Promise<KvStore> => {
    await requireServer('Redis', TEST_SERVERS.redis);
    return createRedisKv({ url: TEST_SERVERS.redis, keyPrefix: `${uniqueName('slots')}:` });
  }],
])('analytics slots (%s)', (_name, makeKv) => {
  let kv: KvStore;
  let gateway: Limits;
  let otherReplica: Limits;
  beforeAll(async () => {
    kv = await makeKv();
    gateway = new Limits(kv, 10_000);
    otherReplica = new Limits(kv, 10_000);
  });
  afterAll(async () => kv.close());

  it('has background work wait while people hold all four slots, and never gives it more than its share', async () => {
    expect([CONCURRENT_ANALYTICS_QUERIES, BACKGROUND_ANALYTICS_QUERIES]).toEqual([4, 2]);
    const ws = randomUUID();
    const people: SemaphoreLease[] = [];
    for (let i = 0; i < 4; i += 1) people.push(await gateway.acquireAnalyticsSlot(ws, refused));
    await expect(gateway.acquireAnalyticsSlot(ws, refused)).rejects.toMatchObject({ kind: 'too-many-concurrent' });
    expect(await otherReplica.acquireBackgroundSlot(ws, 10_000)).toBeNull();
    for (const lease of people) await lease.release();

    // All free: background work gets two, not three, however it asks.
    const background = await Promise.all(Array.from({ length: 5 }, () => otherReplica.acquireBackgroundSlot(ws, 10_000)));
    expect(background.filter((id) => id !== null)).toHaveLength(2);
    // People still get the other two, and no more.
    const mine = [await gateway.acquireAnalyticsSlot(ws, refused), await gateway.acquireAnalyticsSlot(ws, refused)];
    await expect(gateway.acquireAnalyticsSlot(ws, refused)).rejects.toMatchObject({ kind: 'too-many-concurrent' });
    // A lease given back on another replica frees its slot at once.
    const held = background.find((id): id is string => id !== null) as string;
    expect(await gateway.releaseAnalyticsSlot(ws, held)).toBe(true);
    expect(await otherReplica.releaseAnalyticsSlot(ws, held)).toBe(false);
    const next = await gateway.acquireAnalyticsSlot(ws, refused);
    for (const lease of [...mine, next]) await lease.release();
    for (const id of background) if (id !== null) await gateway.releaseAnalyticsSlot(ws, id);
  });

  it('lets a lease nobody gives back lapse (a crashed gatherer), and refuses lease ids it never granted', async () => {
    const ws = randomUUID();
    const first = await gateway.acquireBackgroundSlot(ws, 1_000);
    const second = await gateway.acquireBackgroundSlot(ws, 1_000);
    expect([first, second].every((id) => id !== null)).toBe(true);
    expect(await gateway.acquireBackgroundSlot(ws, 1_000)).toBeNull();
    await new Promise((r) => setTimeout(r, 1_200));
    const after = await gateway.acquireBackgroundSlot(ws, 1_000);
    expect(after).not.toBeNull();
    expect(await gateway.releaseAnalyticsSlot(ws, first as string)).toBe(false);
    expect(await gateway.releaseAnalyticsSlot(ws, 'nonsense')).toBe(false);
    expect(await gateway.releaseAnalyticsSlot(ws, `9:${randomUUID()}`)).toBe(false);
    expect(await gateway.releaseAnalyticsSlot(ws, after as string)).toBe(true);
  });
});
