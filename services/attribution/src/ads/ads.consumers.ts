// ads.report_imported: each report's rows stored as they are (ad_report_rows). Restated rows are
// stored beside the copies they restate; reads take the newest copy of each key. Reports that
// arrive together are written with one insert whose deduplication token comes from the message ids.
import { coalesce, groupToken, type ClickHouseStore, type ConsumerMap, type TypedEnvelope } from '@sightline/kit';

/** Rows per insert at most (a report carries up to 50 000). */
const MAX_ROWS_PER_INSERT = 50_000;

export function adsConsumers(ch: ClickHouseStore): Pick<ConsumerMap<'attribution'>, 'ads.report_imported'> {
  return {
    'ads.report_imported': coalesce({
      keyOf: (envelope) => envelope.payload.website_id,
      weightOf: (envelope) => envelope.payload.rows.length,
      maxWeight: MAX_ROWS_PER_INSERT,
      handle: async (group) => {
        await ch.insert('ad_report_rows', group.flatMap(rowsOf), { dedupToken: groupToken(group) });
      },
    }),
  };
}

function rowsOf(envelope: TypedEnvelope<'ads.report_imported'>): Record<string, unknown>[] {
  const report = envelope.payload;
  return report.rows.map((row, index) => ({
    website_id: report.website_id,
    workspace_id: report.workspace_id,
    platform: report.platform,
    level: row.level,
    item_id: row.item_id,
    date: row.date,
    account_id: report.account_id,
    account_name: report.account_name ?? '',
    currency: report.currency,
    item_name: row.item_name ?? '',
    campaign_id: row.campaign_id ?? '',
    campaign_name: row.campaign_name ?? '',
    campaign_type: row.campaign_type ?? '',
    ad_set_id: row.ad_set_id ?? '',
    ad_set_name: row.ad_set_name ?? '',
    ad_id: row.ad_id ?? '',
    ad_name: row.ad_name ?? '',
    spend: row.spend,
    impressions: row.impressions,
    clicks: row.clicks,
    platform_conversions: row.platform_conversions ?? 0,
    platform_revenue: row.platform_revenue ?? 0,
    reported_at: envelope.occurred_at,
    row_index: index,
  }));
}

