// GET /products over embedded chDB: revenue net of refunds (netted by order date), units, orders,
// margin and cost coverage, restated and redelivered orders, the default store, limit and
// truncation, both reasons for an empty answer, the window's edges, and conformance to the
// OpenAPI response schema.
import { LIMITS, type StoreOrderLineV1 } from '@sightline/proto-schemas';
import { consumerOf, envelopeOf, ordersImport, responseValidator, storeOrder } from '../../test/ads.fixtures';
import { newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import type { ProductRow } from './products.rpc';

interface Body { data: ProductRow[]; meta: Record<string, unknown> & { definitions: Record<string, string>; truncated: boolean; row_count: number } }

const MARCH = { from: '2026-03-01', to: '2026-04-01' };
const validate = responseValidator('ProductsResponse');

let f: AttributionFixture;
beforeAll(async () => {
  f = await openFixture();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

async function products(website: FixtureWebsite, query: Record<string, unknown> = {}): Promise<Body> {
  const reply = await f.call<Body>('attribution.getProducts', website, { ...MARCH, ...query });
  expect(reply.status).toBe(200);
  expect(validate(reply.body) ? [] : validate.errors).toEqual([]);
  expect(reply.body.meta.row_count).toBe(reply.body.data.length);
  return reply.body;
}

const deliverOrders = (website: FixtureWebsite, orders: Parameters<typeof ordersImport>[1], platform?: string) =>
  f.deliver('store.orders_imported', ordersImport(website, orders, platform), website);

const shoe = (quantity: number, o: Partial<StoreOrderLineV1> = {}): StoreOrderLineV1 => ({ product_id: 'shoe', name: 'Trail shoe', quantity, unit_price: 60, unit_cost: 25, ...o });
const sock = (quantity: number, o: Partial<StoreOrderLineV1> = {}): StoreOrderLineV1 => ({ product_id: 'sock', name: 'Wool sock', quantity, unit_price: 10, unit_cost: null, ...o });

describe('revenue, units and orders net of refunds', () => {
  it('sums lines per product and counts the orders holding it', async () => {
    const w = newWebsite();
    await deliverOrders(w, [
      storeOrder({ order_id: 'o-1', lines: [shoe(2), sock(3)] }),
      storeOrder({ order_id: 'o-2', lines: [shoe(1)] }),
    ]);
    const body = await products(w);
    expect(body.data).toEqual([
      { product_id: 'shoe', name: 'Trail shoe', currency: 'EUR', revenue: 180, units: 3, orders: 2, refunded: 0, margin: 105 },
      { product_id: 'sock', name: 'Wool sock', currency: 'EUR', revenue: 30, units: 3, orders: 1, refunded: 0, margin: null },
    ]);
    expect(body.meta).toMatchObject({ platform: 'shopify', platforms: ['shopify'], truncated: false, cost_coverage_pct: 85.71 });
    expect(body.meta).not.toHaveProperty('no_data_reason');
  });

  it('puts a refund naming a product on that product, with its units', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({
      order_id: 'o-1', lines: [shoe(2), sock(3)],
      refunds: [{ refund_id: 'r-1', refunded_at: '2026-03-09T10:00:00.000Z', amount: 60, product_id: 'shoe', quantity: 1 }],
    })]);
    const [shoeRow, sockRow] = (await products(w)).data;
    expect(shoeRow).toMatchObject({ revenue: 60, refunded: 60, units: 1, orders: 1, margin: 60 - 25 });
    expect(sockRow).toMatchObject({ revenue: 30, refunded: 0, units: 3 });
  });

  it('shares a refund naming no product among the order\'s lines by line value, without changing units', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({
      order_id: 'o-1', lines: [shoe(1), sock(4)], // 60 + 40
      refunds: [{ refund_id: 'r-1', refunded_at: '2026-03-09T10:00:00.000Z', amount: 20 }, { refund_id: 'r-2', refunded_at: '2026-03-10T10:00:00.000Z', amount: 5, product_id: 'gift-card' }],
    })]);
    const rows = (await products(w)).data;
    expect(rows).toEqual([
      expect.objectContaining({ product_id: 'shoe', revenue: 45, refunded: 15, units: 1, margin: 20 }),
      expect.objectContaining({ product_id: 'sock', revenue: 30, refunded: 10, units: 4, margin: null }),
    ]);
  });

  it('shares a product\'s refund among its lines in the order, and never takes a line below zero', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({
      order_id: 'o-1', lines: [shoe(1), shoe(1, { unit_price: 30 }), sock(1)],
      refunds: [
        { refund_id: 'r-1', refunded_at: '2026-03-09T10:00:00.000Z', amount: 45, product_id: 'shoe', quantity: 1 },
        { refund_id: 'r-2', refunded_at: '2026-03-09T10:00:00.000Z', amount: 50, product_id: 'sock' }, // sock + shipping
      ],
    })]);
    const rows = (await products(w)).data;
    expect(rows).toEqual([
      expect.objectContaining({ product_id: 'shoe', revenue: 45, refunded: 45, units: 1, orders: 1, margin: 45 - 25 }),
      expect.objectContaining({ product_id: 'sock', revenue: 0, refunded: 10, units: 1 }),
    ]);
  });

  it('nets refunds by order date: every refund of an order placed in the window, whenever made', async () => {
    const w = newWebsite();
    await deliverOrders(w, [
      // Placed in March, refunded in April: counts, refund included.
      storeOrder({ order_id: 'march', ordered_at: '2026-03-30T10:00:00.000Z', lines: [shoe(1)], refunds: [{ refund_id: 'r-1', refunded_at: '2026-04-03T10:00:00.000Z', amount: 60, product_id: 'shoe', quantity: 1 }] }),
      // Placed in February, refunded in March: neither the order nor its refund is in March.
      storeOrder({ order_id: 'feb', ordered_at: '2026-02-27T10:00:00.000Z', lines: [sock(2)], refunds: [{ refund_id: 'r-2', refunded_at: '2026-03-02T10:00:00.000Z', amount: 10, product_id: 'sock', quantity: 1 }] }),
    ]);
    expect((await products(w)).data).toEqual([expect.objectContaining({ product_id: 'shoe', revenue: 0, refunded: 60, units: 0, orders: 1, margin: 0 })]);
    expect((await products(w, { from: '2026-02-01', to: '2026-03-01' })).data).toEqual([expect.objectContaining({ product_id: 'sock', revenue: 10, refunded: 10, units: 1 })]);
    expect((await products(w)).meta.definitions['revenue']).toMatch(/by order date/);
  });
});

describe('margin and cost coverage', () => {
  it('takes cost from the lines that have one, and reports the share of revenue it covers', async () => {
    const w = newWebsite();
    await deliverOrders(w, [
      storeOrder({ order_id: 'o-1', lines: [shoe(1)] }), // 60, cost 25
      storeOrder({ order_id: 'o-2', lines: [shoe(1, { unit_cost: null })] }), // 60, no cost
      storeOrder({ order_id: 'o-3', lines: [sock(3)] }), // 30, no cost
      storeOrder({ order_id: 'o-4', lines: [{ product_id: 'hat', name: 'Hat', quantity: 2, unit_price: 15, unit_cost: 0 }] }), // 30, free
    ]);
    const body = await products(w);
    expect(body.data.map((r) => [r.product_id, r.revenue, r.margin])).toEqual([['shoe', 120, 35], ['hat', 30, 30], ['sock', 30, null]]);
    expect(body.meta['cost_coverage_pct']).toBe(50); // (60 + 30) / 180
  });

  it('counts cost on net units only', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', lines: [shoe(3)], refunds: [{ refund_id: 'r', refunded_at: '2026-03-06T00:00:00.000Z', amount: 120, product_id: 'shoe', quantity: 2 }] })]);
    expect((await products(w)).data[0]).toMatchObject({ revenue: 60, units: 1, margin: 35 });
  });

  it('reports 0 coverage when nothing carries revenue', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', lines: [shoe(1, { unit_price: 0 })] })]);
    const body = await products(w);
    expect(body.data).toEqual([expect.objectContaining({ revenue: 0, margin: -25 })]);
    expect(body.meta['cost_coverage_pct']).toBe(0);
  });
});

describe('restated and redelivered orders', () => {
  it('takes the newest copy of an order, lines and refunds', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', lines: [shoe(2), sock(1)] })]);
    await deliverOrders(w, [storeOrder({
      order_id: 'o-1', lines: [shoe(2, { unit_price: 55 })],
      refunds: [{ refund_id: 'r-1', refunded_at: '2026-03-08T00:00:00.000Z', amount: 55, product_id: 'shoe', quantity: 1 }],
    })]);
    await deliverOrders(w, [storeOrder({
      order_id: 'o-1', lines: [shoe(2, { unit_price: 55 })],
      refunds: [
        { refund_id: 'r-1', refunded_at: '2026-03-08T00:00:00.000Z', amount: 55, product_id: 'shoe', quantity: 1 },
        { refund_id: 'r-2', refunded_at: '2026-03-09T00:00:00.000Z', amount: 10 },
      ],
    })]);
    expect((await products(w)).data).toEqual([{ product_id: 'shoe', name: 'Trail shoe', currency: 'EUR', revenue: 45, units: 1, orders: 1, refunded: 65, margin: 20 }]);
  });

  it('follows an order whose newest copy moved it out of the window, and a later rename', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', ordered_at: '2026-03-31T23:00:00.000Z', lines: [shoe(1)] }), storeOrder({ order_id: 'o-2', lines: [sock(1)] })]);
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', ordered_at: '2026-04-01T01:00:00.000Z', lines: [shoe(1)] })]);
    await deliverOrders(w, [storeOrder({ order_id: 'o-3', ordered_at: '2026-03-20T00:00:00.000Z', lines: [sock(1, { name: 'Merino sock' })] })]);
    expect((await products(w)).data).toEqual([expect.objectContaining({ product_id: 'sock', name: 'Merino sock', orders: 2 })]);
  });

  it('orders copies by when they were published, not when they arrived', async () => {
    const w = newWebsite();
    const consume = consumerOf(f, 'store.orders_imported');
    await consume(envelopeOf('store.orders_imported', ordersImport(w, [storeOrder({ order_id: 'o-1', lines: [shoe(2)] })]), w, '2026-03-10T00:00:00.000Z'));
    await consume(envelopeOf('store.orders_imported', ordersImport(w, [storeOrder({ order_id: 'o-1', lines: [shoe(1)] })]), w, '2026-03-09T00:00:00.000Z'));
    expect((await products(w)).data[0]).toMatchObject({ revenue: 120, units: 2 });
  });

  it('changes nothing when the same message is delivered twice, or its content is imported twice', async () => {
    const w = newWebsite();
    const message = ordersImport(w, [storeOrder({ order_id: 'o-1', lines: [shoe(1), sock(2)] }), storeOrder({ order_id: 'o-2', lines: [sock(1)] })]);
    const consume = consumerOf(f, 'store.orders_imported');
    const envelope = envelopeOf('store.orders_imported', message, w);
    await consume(envelope);
    const once = await products(w);
    await consume(envelope);
    await f.deliver('store.orders_imported', message, w);
    const again = await products(w);
    expect(again.data).toEqual(once.data);
    expect(again.data.map((r) => [r.product_id, r.orders, r.units])).toEqual([['shoe', 1, 1], ['sock', 2, 3]]);
    const stored = await f.ch.query<{ n: number }>('SELECT count() AS n FROM store_orders WHERE website_id = {w:UUID}', { w: w.id });
    expect(Number(stored[0]?.n)).toBe(4); // the redelivered envelope was dropped by its token; the re-import is read once
  });
});

describe('store, currency and window', () => {
  it('uses the store connected first unless platform names another', async () => {
    const w = newWebsite();
    const consume = consumerOf(f, 'store.orders_imported');
    const at = (iso: string, platform: string, orderId: string, line: StoreOrderLineV1) =>
      consume(envelopeOf('store.orders_imported', ordersImport(w, [storeOrder({ order_id: orderId, lines: [line] })], platform), w, iso));
    // Shopify's orders arrive first, but WooCommerce was imported (connected) earlier.
    await at('2026-03-02T00:00:00.000Z', 'shopify', 's-1', shoe(1));
    await at('2026-03-01T00:00:00.000Z', 'woocommerce', 'w-1', sock(1));
    await at('2026-03-03T00:00:00.000Z', 'woocommerce', 'w-2', sock(1));
    const byDefault = await products(w);
    expect(byDefault.data.map((r) => [r.product_id, r.orders])).toEqual([['sock', 2]]);
    expect(byDefault.meta).toMatchObject({ platform: 'woocommerce', platforms: ['woocommerce', 'shopify'] });
    const shopify = await products(w, { platform: 'shopify' });
    expect(shopify.data.map((r) => r.product_id)).toEqual(['shoe']);
    expect(shopify.meta['platform']).toBe('shopify');
  });

  it('answers no_store_connected when no orders were ever imported, or none for the platform asked for', async () => {
    const empty = await products(newWebsite());
    expect(empty.data).toEqual([]);
    expect(empty.meta).toMatchObject({ no_data_reason: 'no_store_connected', platform: null, platforms: [], truncated: false, cost_coverage_pct: 0 });
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', lines: [shoe(1)] })]);
    expect((await products(w, { platform: 'woocommerce' })).meta).toMatchObject({ no_data_reason: 'no_store_connected', platform: 'woocommerce' });
  });

  it('answers no_orders when the store has no orders in the window', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', ordered_at: '2026-02-10T00:00:00.000Z', lines: [shoe(1)] })]);
    const body = await products(w);
    expect(body.data).toEqual([]);
    expect(body.meta).toMatchObject({ no_data_reason: 'no_orders', platform: 'shopify' });
  });

  it('includes an order placed at `from` and excludes one placed at `to`, in the website timezone', async () => {
    const w = newWebsite({ timezone: 'Europe/Berlin' });
    await deliverOrders(w, [
      storeOrder({ order_id: 'before', ordered_at: '2026-02-28T22:59:59.999Z', lines: [sock(1)] }),
      storeOrder({ order_id: 'first', ordered_at: '2026-02-28T23:00:00.000Z', lines: [shoe(1)] }),
      storeOrder({ order_id: 'last', ordered_at: '2026-03-31T21:59:59.999Z', lines: [shoe(1)] }),
      storeOrder({ order_id: 'after', ordered_at: '2026-03-31T22:00:00.000Z', lines: [sock(1)] }),
    ]);
    const body = await products(w, { period: 'march 2026', from: undefined, to: undefined });
    expect(body.meta['window']).toMatchObject({ from: '2026-02-28T23:00:00.000Z', to: '2026-03-31T22:00:00.000Z' });
    expect(body.data).toEqual([expect.objectContaining({ product_id: 'shoe', orders: 2 })]);
  });

  it('keeps amounts in different currencies apart, one row per product and currency', async () => {
    const w = newWebsite();
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', currency: 'EUR', lines: [shoe(1)] }), storeOrder({ order_id: 'o-2', currency: 'USD', lines: [shoe(2, { unit_price: 70 })] })]);
    expect((await products(w)).data.map((r) => [r.product_id, r.currency, r.revenue])).toEqual([['shoe', 'USD', 140], ['shoe', 'EUR', 60]]);
  });

  it('does not mix websites', async () => {
    const w = newWebsite();
    const other = newWebsite({ workspace_id: w.workspace_id });
    await deliverOrders(w, [storeOrder({ order_id: 'o-1', lines: [shoe(1)] })]);
    await deliverOrders(other, [storeOrder({ order_id: 'o-1', lines: [shoe(5)] })]);
    expect((await products(w)).data[0]).toMatchObject({ units: 1 });
  });
});

describe('limit', () => {
  const many = (count: number) => storeOrder({
    order_id: `big-${count}`,
    // Revenue falls with the index; every third product ties with the one before it.
    lines: Array.from({ length: count }, (_, i) => ({ product_id: `p-${String(i).padStart(4, '0')}`, name: `P${i}`, quantity: 1, unit_price: 1000 - i + (i % 3 === 2 ? 1 : 0) })),
  });

  it(`returns ${LIMITS.products.default} products by default, by revenue then product_id, and says it truncated`, async () => {
    const w = newWebsite();
    await deliverOrders(w, [many(LIMITS.products.default + 1)]);
    const body = await products(w);
    expect(body.data).toHaveLength(LIMITS.products.default);
    expect(body.meta.truncated).toBe(true);
    expect(body.data.slice(0, 4).map((r) => [r.product_id, r.revenue])).toEqual([['p-0000', 1000], ['p-0001', 999], ['p-0002', 999], ['p-0003', 997]]);
  });

  it('honours a smaller limit, is not truncated at exactly the limit, and cuts a larger one to the maximum', async () => {
    const w = newWebsite();
    await deliverOrders(w, [many(LIMITS.products.maximum + 2)]);
    const small = await products(w, { limit: 3 });
    expect(small.data.map((r) => r.product_id)).toEqual(['p-0000', 'p-0001', 'p-0002']);
    expect(small.meta.truncated).toBe(true);
    const max = await products(w, { limit: 10_000 });
    expect(max.data).toHaveLength(LIMITS.products.maximum);
    expect(max.meta.truncated).toBe(true);
    const exact = newWebsite();
    await deliverOrders(exact, [many(3)]);
    expect((await products(exact, { limit: 3 })).meta.truncated).toBe(false);
    expect((await products(exact, { limit: '2' })).data).toHaveLength(2);
  });

  it('refuses a limit below 1 and a malformed platform', async () => {
    const w = newWebsite();
    await expect(f.call('attribution.getProducts', w, { ...MARCH, limit: 0 })).rejects.toMatchObject({ kind: 'invalid-request' });
    await expect(f.call('attribution.getProducts', w, { ...MARCH, platform: 'Shop-ify' })).rejects.toMatchObject({ kind: 'invalid-request' });
    await expect(f.call('attribution.getProducts', w, { from: '2026-03-05', to: '2026-03-01' })).rejects.toMatchObject({ kind: 'invalid-window' });
  });
});
