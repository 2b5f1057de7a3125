// Outcome values of conversions (from conversion.value_changed), latest change wins.
import type { ClickHouseStore } from '@sightline/kit';
import type { ConversionValueChangedV1 } from '@sightline/proto-schemas';

export interface ConversionOutcome {
  sales_value: number | null;
  quote_value: number | null;
  currency: string | null;
  changed_at: string;
}

export class OutcomesRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  async insertMany(dedupToken: string, changes: ConversionValueChangedV1[]): Promise<void> {
    if (changes.length === 0) return;
    await this.ch.insert(
      'conversion_outcomes',
      changes.map((c) => ({
        conversion_id: c.conversion_id,
        website_id: c.website_id,
        sales_value: c.sales_value,
        quote_value: c.quote_value,
        currency: c.currency ?? '',
        changed_at: c.changed_at,
      })),
      { dedupToken },
    );
  }

  /** The latest outcome of a conversion, or null when none was ever written. */
  async latest(websiteId: string, conversionId: string): Promise<ConversionOutcome | null> {
    // Output names differ from the column names: an alias named like a column would shadow it.
    const rows = await this.ch.query<{ sales: number | null; quote: number | null; cur: string | null; latest: string }>(
      `SELECT argMax(tuple(sales_value), changed_at).1 AS sales, argMax(tuple(quote_value), changed_at).1 AS quote,
              nullIf(argMax(currency, changed_at), '') AS cur, toString(max(changed_at)) AS latest
         FROM conversion_outcomes
        WHERE website_id = {website:UUID} AND conversion_id = {conversion:UUID}
       HAVING count() > 0`,
      { website: websiteId, conversion: conversionId },
    );
    const row = rows[0];
    return row ? { sales_value: row.sales, quote_value: row.quote, currency: row.cur, changed_at: row.latest } : null;
  }
}
