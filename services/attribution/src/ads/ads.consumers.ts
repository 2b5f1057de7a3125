// ads.report_imported: each report's rows stored as they are (ad_report_rows). Restated rows are
// stored beside the copies they restate; reads take the newest copy of each key. Reports that
// arrive together are written with one insert whose deduplication token comes from the message ids.
import { createHash } from 'node:crypto';
import { coalesce, type ClickHouseStore, type Envelope, type MessageHandler } from '@sightline/kit';
import type { AdsReportImportedV1 } from '@sightline/proto-schemas';

/** Rows per insert at most (a report carries up to 50 000). */
const MAX_ROWS_PER_INSERT = 50_000;

export function adsConsumers(ch: ClickHouseStore): Record<string, MessageHandler> {
  return {
    'ads.report_imported': coalesce({
      keyOf: (envelope) => (envelope.payload as AdsReportImportedV1).website_id,
      weightOf: (envelope) => (envelope.payload as AdsReportImportedV1).rows.length,
      maxWeight: MAX_ROWS_PER_INSERT,
      handle: async (group) => {
        await ch.insert('ad_report_rows', group.flatMap(rowsOf), { dedupToken: groupToken(group) });
      },
    }),
  };
}

function rowsOf(envelope: Envelope): Record<string, unknown>[] {
  const report = envelope.payload as AdsReportImportedV1;
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

/** The deduplication token of a group: the same messages give the same token. */
function groupToken(group: Envelope[]): string {
  return group.length === 1 ? (group[0] as Envelope).id : createHash('sha256').update(group.map((e) => e.id).sort().join(',')).digest('hex');
}
