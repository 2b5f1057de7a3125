// GET /products: revenue, units, orders and margin per product of one connected store, net of
// refunds, from store.orders_imported. The store is the one asked for, else the one connected
// first (the platform whose orders were imported earliest). An empty answer says why in
// meta.no_data_reason: no store connected at all, or none of its orders in the window.
import { ProblemError, type ClickHouseStore } from '@sightline/kit';
import { LIMITS, type ApiRequest, type ApiResponse } from '@sightline/proto-schemas';
import { analyticsContext, metaOf } from '../analytics/context';
import { CONNECTED_STORES_SQL, PRODUCTS_SQL, type ProductSumsRow } from './products.sql';

interface ProductsRawQuery {
  period?: string;
  from?: string;
  to?: string;
  platform?: string;
  limit?: number | string;
}

export interface ProductRow {
  product_id: string;
  name: string;
  currency: string;
  revenue: number;
  units: number;
  orders: number;
  refunded: number;
  margin: number | null;
}

type NoDataReason = 'no_store_connected' | 'no_orders';

const DEFINITIONS: Record<string, string> = {
  revenue: 'Quantity times unit price of the product\'s order lines, minus the refunds put on them, in the order currency (each row\'s currency; nothing is converted). An order counts when it was placed in the window; all its refunds count, whenever they were made (refunds are netted by order date).',
  refunded: 'Refunds put on the product: a refund naming the product is shared among its lines in the order by line value, a refund naming no product among all the order\'s lines by line value. Refunds beyond what the products were worth (shipping, tax) are not put on products.',
  units: 'Units ordered minus units refunded (refunds that name the product and a quantity).',
  orders: 'Orders placed in the window holding the product, refunded or not.',
  margin: 'Revenue minus unit cost times net units, over the lines whose unit cost is set; null when no line of the product has a cost. Covers only the costed share of revenue (meta.cost_coverage_pct).',
  cost_coverage_pct: 'Share of net revenue, in percent, on lines whose unit cost is set.',
  platform: 'The store the rows come from: the platform asked for, else the store connected first (whose orders were imported earliest).',
};

export function productsRpcHandlers(ch: ClickHouseStore) {
  return {
    'attribution.getProducts': async (request: ApiRequest<ProductsRawQuery>): Promise<ApiResponse> => {
      const ctx = analyticsContext(request);
      const limit = limitOf(ctx.request.query.limit);
      const requested = platformOf(ctx.request.query.platform);
      const stores = (await ch.query<{ platform: string }>(CONNECTED_STORES_SQL, { website: ctx.website.id })).map((s) => s.platform);
      const platform = requested ?? stores[0] ?? null;

      const answer = (rows: ProductRow[], fields: { truncated: boolean; cost_coverage_pct: number; no_data_reason?: NoDataReason }): ApiResponse => ({
        status: 200,
        body: {
          data: rows,
          meta: metaOf(ctx, { row_count: rows.length, definitions: DEFINITIONS, platform, platforms: stores, ...fields }),
        },
      });
      if (platform === null || !stores.includes(platform)) return answer([], { truncated: false, cost_coverage_pct: 0, no_data_reason: 'no_store_connected' });

      const found = await ch.query<ProductSumsRow>(PRODUCTS_SQL, { website: ctx.website.id, platform, from: ctx.from, to: ctx.to, limit: limit + 1 });
      if (found.length === 0) return answer([], { truncated: false, cost_coverage_pct: 0, no_data_reason: 'no_orders' });
      const rows = found.slice(0, limit).map(productRow);
      const totalRevenue = Number(found[0]?.total_revenue ?? 0);
      const costedRevenue = Number(found[0]?.total_costed_revenue ?? 0);
      return answer(rows, { truncated: found.length > limit, cost_coverage_pct: coveragePct(costedRevenue, totalRevenue) });
    },
  };
}

function productRow(r: ProductSumsRow): ProductRow {
  const revenue = roundAmount(Number(r.revenue_net));
  return {
    product_id: r.product_id,
    name: r.product_name,
    currency: r.currency,
    revenue,
    units: Math.round(Number(r.units_net)),
    orders: Number(r.order_count),
    refunded: roundAmount(Number(r.refunded_sum)),
    margin: Number(r.has_cost) === 1 ? roundAmount(Number(r.costed_revenue) - Number(r.cost ?? 0)) : null,
  };
}

/** Percent with two decimals, within [0, 100]; 0 when there is no revenue to cover. */
function coveragePct(costed: number, total: number): number {
  if (total <= 0) return 0;
  return Math.min(100, Math.max(0, Math.round((costed / total) * 10_000) / 100));
}

/** Float sums carry noise in the last digits (0.1 + 0.2); amounts are cut to 6 decimals. */
const roundAmount = (value: number): number => Math.round(value * 1e6) / 1e6;

/** The gateway has clamped the limit already; a direct caller gets the same treatment. */
function limitOf(value: number | string | undefined): number {
  const n = value === undefined || value === '' ? LIMITS.products.default : Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new ProblemError('invalid-request', { detail: `limit ${JSON.stringify(value)} is not a positive integer.`, remediation: `Send a limit from 1 to ${LIMITS.products.maximum}.` });
  }
  return Math.min(n, LIMITS.products.maximum);
}

function platformOf(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  if (!/^[a-z][a-z0-9_]*$/.test(value) || value.length > 50) {
    throw new ProblemError('invalid-request', { detail: `platform ${JSON.stringify(value)} is not a store platform identifier.`, remediation: 'Send a store platform such as shopify or woocommerce, or leave it out for the store connected first.' });
  }
  return value;
}
