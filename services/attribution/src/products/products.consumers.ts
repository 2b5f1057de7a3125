// store.orders_imported: one store_orders row per copy of an order, lines and refunds as parallel
// arrays. A later copy restates the whole order; reads take the newest. Imports that arrive
// together are written with one insert whose deduplication token comes from the message ids.
import { coalesce, groupToken, type ClickHouseStore, type ConsumerMap, type TypedEnvelope } from '@sightline/kit';

export function productsConsumers(ch: ClickHouseStore): Pick<ConsumerMap<'attribution'>, 'store.orders_imported'> {
  return {
    'store.orders_imported': coalesce({
      keyOf: (envelope) => envelope.payload.website_id,
      weightOf: (envelope) => envelope.payload.orders.length,
      handle: async (group) => {
        await ch.insert('store_orders', group.flatMap(ordersOf), { dedupToken: groupToken(group) });
      },
    }),
  };
}

function ordersOf(envelope: TypedEnvelope<'store.orders_imported'>): Record<string, unknown>[] {
  const imported = envelope.payload;
  return imported.orders.map((order) => ({
    website_id: imported.website_id,
    workspace_id: imported.workspace_id,
    platform: imported.platform,
    order_id: order.order_id,
    ordered_at: order.ordered_at,
    currency: order.currency,
    line_product_ids: order.lines.map((l) => l.product_id),
    line_names: order.lines.map((l) => l.name),
    line_quantities: order.lines.map((l) => l.quantity),
    line_unit_prices: order.lines.map((l) => l.unit_price),
    line_unit_costs: order.lines.map((l) => l.unit_cost ?? null),
    refund_ids: order.refunds.map((r) => r.refund_id),
    refund_amounts: order.refunds.map((r) => r.amount),
    refund_product_ids: order.refunds.map((r) => r.product_id ?? ''),
    refund_quantities: order.refunds.map((r) => r.quantity ?? null),
    refunded_ats: order.refunds.map((r) => r.refunded_at),
    imported_at: envelope.occurred_at,
  }));
}

