// The SQL of GET /products. Rules (also in meta.definitions and the OpenAPI description):
// - An order counts when the newest copy of it was placed in the window (ordered_at); a later copy
//   restates the whole order, lines and refunds.
// - Refunds are netted by order date: every refund of a counted order counts, whenever it was
//   made. A refund naming a product is shared among that product's lines of the order by line
//   value; a refund naming no product (or one not in the order) among all lines by line value.
//   A line never loses more than it was worth: refunds beyond the products' value (shipping, tax)
//   are not put on products.
// - Units are net of refunded quantities (a refund with a product and a quantity); orders counts
//   the orders holding the product, refunded or not.
// - Cost is unit_cost times net units on lines whose unit_cost is set; margin is those lines'
//   net revenue minus that cost, null when no line of the product has a cost.

/** Stores that ever imported orders for the website, the first connected first. */
export const CONNECTED_STORES_SQL = `
  SELECT platform, min(imported_at) AS first_imported
    FROM store_orders
   WHERE website_id = {website:UUID}
   GROUP BY platform
   ORDER BY first_imported, platform`;

export interface ProductSumsRow {
  product_id: string;
  currency: string;
  product_name: string;
  revenue_net: number | string;
  refunded_sum: number | string;
  units_net: number | string;
  order_count: number | string;
  has_cost: number | string;
  costed_revenue: number | string;
  cost: number | string | null;
  product_count: number | string;
  total_revenue: number | string;
  total_costed_revenue: number | string;
}

/** Products of one store in the window, by net revenue then product id; window totals on every row. */
export const PRODUCTS_SQL = `
  WITH latest AS (
    SELECT order_id, ordered_at, currency, line_product_ids, line_names, line_quantities, line_unit_prices,
           line_unit_costs, refund_amounts, refund_product_ids, refund_quantities
      FROM store_orders
     WHERE website_id = {website:UUID} AND platform = {platform:String}
       AND order_id IN (
         SELECT order_id FROM store_orders
          WHERE website_id = {website:UUID} AND platform = {platform:String}
            AND ordered_at >= {from:DateTime64(3, 'UTC')} AND ordered_at < {to:DateTime64(3, 'UTC')})
     ORDER BY imported_at DESC, inserted_at DESC
     LIMIT 1 BY order_id
  ),
  lines AS (
    SELECT order_id, ordered_at, currency, product_id, line_name, quantity, unit_cost,
           quantity * unit_price AS line_revenue,
           arraySum((q, p, id) -> if(id = product_id, q * p, 0), line_quantities, line_unit_prices, line_product_ids) AS product_revenue,
           arraySum((q, id) -> if(id = product_id, q, 0), line_quantities, line_product_ids) AS product_quantity,
           arraySum((q, p) -> q * p, line_quantities, line_unit_prices) AS order_revenue,
           arraySum((a, id) -> if(id = product_id, a, 0), refund_amounts, refund_product_ids) AS product_refund,
           arraySum((a, id) -> if(has(line_product_ids, id), 0, a), refund_amounts, refund_product_ids) AS order_refund,
           arraySum((q, id) -> if(id = product_id, ifNull(q, 0), 0), refund_quantities, refund_product_ids) AS product_refund_quantity
      FROM latest
     ARRAY JOIN line_product_ids AS product_id, line_names AS line_name, line_quantities AS quantity,
                line_unit_prices AS unit_price, line_unit_costs AS unit_cost
     WHERE ordered_at >= {from:DateTime64(3, 'UTC')} AND ordered_at < {to:DateTime64(3, 'UTC')}
  ),
  netted AS (
    SELECT *,
           least(line_revenue,
                 if(product_revenue > 0, product_refund * line_revenue / product_revenue, 0)
                 + if(order_revenue > 0, order_refund * line_revenue / order_revenue, 0)) AS line_refund,
           least(toFloat64(quantity), if(product_quantity > 0, product_refund_quantity * quantity / product_quantity, 0)) AS line_refund_units
      FROM lines
  ),
  products AS (
    SELECT product_id, currency,
           argMax(line_name, ordered_at) AS product_name,
           sum(line_revenue) - sum(line_refund) AS revenue_net,
           sum(line_refund) AS refunded_sum,
           sum(quantity) - sum(line_refund_units) AS units_net,
           uniqExact(order_id) AS order_count,
           countIf(unit_cost IS NOT NULL) > 0 AS has_cost,
           sumIf(line_revenue - line_refund, unit_cost IS NOT NULL) AS costed_revenue,
           sumIf((quantity - line_refund_units) * assumeNotNull(unit_cost), unit_cost IS NOT NULL) AS cost
      FROM netted
     GROUP BY product_id, currency
  )
  SELECT product_id, currency, product_name, revenue_net, refunded_sum, units_net, order_count, has_cost,
         costed_revenue, cost,
         count() OVER () AS product_count,
         sum(revenue_net) OVER () AS total_revenue,
         sum(costed_revenue) OVER () AS total_costed_revenue
    FROM products
   ORDER BY revenue_net DESC, product_id, currency
   LIMIT {limit:UInt32}`;
