// The intake's publishing: one ingest.batch_received per partition of (website, visitor), and the
// schema check made once, by the bus; when the bus refuses a batch, exactly the events it would
// refuse are rejected by index and the rest published. Runs on the in-process bus with 4 partitions.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { createBus, createStoreProvider, partitionOf, serviceBus, type Bus, type Envelope, type KvStore } from '@sightline/kit';
import { messageValidator, type ApiRequest, type EventBatchV1 } from '@sightline/proto-schemas';
import { buildClassifier, loadChannelRules, NO_GEO_LOOKUP, type Classifier } from './classify';
import { orderingKey } from './intake';
import { ingestRpcHandlers } from './ingest.rpc';

const PARTITIONS = 4;
const WEBSITE = { id: randomUUID(), domain: 'shop.test', timezone: 'UTC', currency: 'EUR' };
const WORKSPACE = { id: randomUUID(), name: 'W', timezone: 'UTC', currency: 'EUR', plan: 'internal' as const };

describe('ingest intake publishing', () => {
  let bus: Bus;
  let kv: KvStore;
  let classifier: Classifier;
  const received: Envelope<EventBatchV1>[] = [];

  beforeAll(async () => {
    const real = buildClassifier(await loadChannelRules(), NO_GEO_LOOKUP);
    // A classification the message schema refuses (a channel must be a string), for one page only:
    // the defect the bus's check is there to catch.
    classifier = { ...real, classify: (ctx) => (ctx.url?.includes('/broken') ? { ...real.classify(ctx), channel: null as unknown as string } : real.classify(ctx)) };
    bus = await createBus({ url: `memory://intake-${randomUUID()}`, validator: messageValidator, logger: pino({ level: 'silent' }), partitions: { count: PARTITIONS, types: new Set(['ingest.batch_received']) } });
    kv = await createStoreProvider({ dataDir: '/nonexistent-not-used', logger: pino({ level: 'silent' }) }).kv();
    await bus.consume({ service: 'ingest', types: ['ingest.batch_received'], handler: async (e) => void received.push(e as Envelope<EventBatchV1>) });
  });

  afterAll(async () => {
    await bus.close();
    await kv.close();
  });

  const post = (events: unknown[], idempotencyKey?: string) => {
    const handlers = ingestRpcHandlers({ bus: serviceBus(bus, 'ingest'), kv, classifier });
    const request: ApiRequest<Record<string, unknown>, { events: unknown[] }> = {
      operation: 'postEvents', request_id: randomUUID(), workspace: WORKSPACE, website: WEBSITE, key: { id: 'key_1', scopes: ['events:write'] },
      params: {}, query: {}, body: { events }, headers: idempotencyKey ? { idempotency_key: idempotencyKey } : {},
    };
    return handlers['ingest.postEvents'](request);
  };
  const settle = () => new Promise((r) => setTimeout(r, 50));

  it('publishes one batch per partition of website and visitor, each visitor whole in one of them', async () => {
    received.length = 0;
    const events = Array.from({ length: 40 }, (_, i) => ({ event_type: 'custom', event_name: `e${i}`, anonymous_id: `visitor-${i % 10}` }));
    const response = await post(events, 'partitions-1');
    expect(response.body).toMatchObject({ accepted: 40, rejected: 0 });
    await settle();
    expect(received.flatMap((e) => e.payload.events)).toHaveLength(40);
    const partitionsUsed = new Set<number>();
    for (const envelope of received) {
      const partitions = new Set(envelope.payload.events.map((e) => partitionOf(orderingKey(WEBSITE.id, e), PARTITIONS)));
      expect(partitions.size).toBe(1);
      partitionsUsed.add([...partitions][0] as number);
      // Ids derive from the request's key, per partition: a retried request republishes the same ones.
      expect(envelope.id).toMatch(/^api:[0-9a-f]{32}:p\d$/);
    }
    expect(received).toHaveLength(partitionsUsed.size);
    expect(partitionsUsed.size).toBeGreaterThan(1);
  });

  it('rejects by index only the events the bus refuses, and publishes the rest', async () => {
    received.length = 0;
    const events = [
      { anonymous_id: 'a', properties: { url: 'https://shop.test/fine' } },
      { anonymous_id: 'b', properties: { url: 'https://shop.test/broken' } },
      { anonymous_id: 'c\u0000', properties: { url: 'https://shop.test/fine' } },
      { anonymous_id: 'd', properties: { url: 'https://shop.test/broken' } },
      { anonymous_id: 'e', properties: { url: 'https://shop.test/fine' } },
    ];
    const response = await post(events);
    const body = response.body as { accepted: number; rejected: number; errors: { index: number; detail: string }[] };
    expect(body.accepted).toBe(2);
    expect(body.errors.map((e) => e.index)).toEqual([1, 2, 3]);
    expect(body.errors[0]?.detail).toMatch(/could not be stored as sent/);
    expect(body.rejected).toBe(3);
    await settle();
    expect(received.flatMap((e) => e.payload.events.map((x) => x.anonymous_id)).sort()).toEqual(['a', 'e']);
  });

  /** `depth` objects inside one another, built without recursion. */
  const nested = (depth: number) => {
    const root: Record<string, unknown> = {};
    let at = root;
    for (let i = 1; i < depth; i += 1) at = (at['a'] = {}) as Record<string, unknown>;
    return root;
  };

  it('rejects by index an event nested as deep as the gateway carries, naming the limit, and takes the rest', async () => {
    // body → events → event → properties: 29 levels of properties put the body at the gateway's 32.
    const response = await post([{ anonymous_id: 'deep', properties: nested(29) }, { anonymous_id: 'flat', properties: { a: { b: 1 } } }], 'deep-1');
    expect(response.body).toMatchObject({ accepted: 1, rejected: 1, errors: [{ index: 0, detail: expect.stringMatching(/^properties(\.a)+ is nested deeper than 16 levels \(an event nests at most 16 levels/) }] });
  });

  it('refuses a batch deeper or larger than any body may be before hashing it (no stack overflow, whoever calls)', async () => {
    await expect(post([{ anonymous_id: 'x', properties: nested(50_000) }], 'deep-2')).rejects.toMatchObject({ kind: 'invalid-request', remediation: expect.stringContaining('32 levels') });
    await expect(post(new Array(100_001).fill(0))).rejects.toMatchObject({ kind: 'invalid-request', remediation: expect.stringContaining('100,000 values') });
  });
});
