// Turns checked import rows into what the rest of crm-sync speaks: mirror records for deals,
// companies and contacts (applyRecords), and ads.report_imported / store.orders_imported messages
// for spend and orders. Pure functions: the route reads and writes the database around them.
import { stageKey, type AdReportRowV1, type AdsReportImportedV1, type StageBucket, type StoreOrderV1, type StoreOrdersImportedV1 } from '@sightline/proto-schemas';
import type { CrmCompany, CrmContact, CrmDeal, CrmPipeline } from '../records';
import { orderKey, spendItemId, spendLevel, toInstant } from './rows';
import type { CompanyImportRow, ContactImportRow, DealImportRow, OrderImportRow, SpendImportRow } from './schemas';

/** A checked row and its place in the request (the CLI maps it back to a file line). */
export interface Indexed<R> {
  index: number;
  row: R;
}

export interface Rejection {
  index: number;
  reason: string;
}

export interface WebsiteScope {
  websiteId: string;
  workspaceId: string;
}

export const DEFAULT_IMPORT_PIPELINE = 'Imported deals';

/** Only the keys whose value is set: message schemas refuse what they do not list. */
function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as T;
}

/** A checked instant field as ISO (checkImportRow already proved it parses). */
function iso(value: string): string {
  return toInstant(value) ?? value;
}

const keyOf = (name: string, fallback: string): string => stageKey(name) || fallback;

function dealStage(row: DealImportRow): { pipeline: string; stage: string } | null {
  const stage = row.stage ?? (row.bucket ? row.bucket.charAt(0).toUpperCase() + row.bucket.slice(1) : undefined);
  if (stage === undefined) return null; // no stage: the deal counts as 'other'
  return { pipeline: row.pipeline ?? DEFAULT_IMPORT_PIPELINE, stage };
}

/** The ids of the pipelines the rows name (the route reads their stored stages before merging). */
export function pipelineIdsOf(rows: readonly DealImportRow[]): string[] {
  const ids = new Set<string>();
  for (const row of rows) {
    const named = dealStage(row);
    if (named) ids.add(keyOf(named.pipeline, 'pipeline'));
  }
  return [...ids];
}

/**
 * The import pipelines after these rows: stored stages are kept, stages first named here are
 * appended in the order rows name them (bucket as given, default open), and a row giving a bucket
 * sets its stage's bucket (the last such row wins).
 */
export function mergePipelines(rows: readonly DealImportRow[], stored: ReadonlyMap<string, CrmPipeline>): CrmPipeline[] {
  const merged = new Map<string, CrmPipeline>();
  for (const row of rows) {
    const named = dealStage(row);
    if (!named) continue;
    const id = keyOf(named.pipeline, 'pipeline');
    let pipeline = merged.get(id);
    if (!pipeline) {
      const before = stored.get(id);
      pipeline = before ? { ...before, stages: before.stages.map((s) => ({ ...s })) } : { id, name: named.pipeline, stages: [] };
      merged.set(id, pipeline);
    }
    const stageId = keyOf(named.stage, 'stage');
    const stage = pipeline.stages.find((s) => s.id === stageId);
    if (!stage) {
      const position = pipeline.stages.reduce((max, s) => Math.max(max, s.position + 1), 0);
      pipeline.stages.push({ id: stageId, name: named.stage, position, bucket: row.bucket ?? 'open' });
    } else if (row.bucket && stage.bucket !== row.bucket) {
      stage.bucket = row.bucket satisfies StageBucket;
    }
  }
  return [...merged.values()];
}

export function dealRecord(row: DealImportRow): CrmDeal {
  const named = dealStage(row);
  const createdAt = iso(row.created_at);
  const closedAt = row.closed_at ? iso(row.closed_at) : null;
  return {
    crm_id: row.crm_id,
    name: row.name,
    amount: row.amount ?? null,
    currency: row.currency ?? null,
    pipeline_id: named ? keyOf(named.pipeline, 'pipeline') : null,
    stage_id: named ? keyOf(named.stage, 'stage') : null,
    company_crm_id: row.company_crm_id ?? null,
    contact_crm_ids: row.contact_crm_ids ?? [],
    created_at: createdAt,
    closed_at: closedAt,
    // Deterministic, so a re-import of the same file is the same copy (nothing to announce).
    updated_at: row.updated_at ? iso(row.updated_at) : (closedAt ?? createdAt),
  };
}

export function companyRecord(row: CompanyImportRow, importedAt: string): CrmCompany {
  const createdAt = row.created_at ? iso(row.created_at) : null;
  const updatedAt = row.updated_at ? iso(row.updated_at) : null;
  return {
    crm_id: row.crm_id,
    name: row.name,
    domain: row.domain?.toLowerCase() ?? null,
    lifecycle_stage: row.lifecycle_stage ?? null,
    created_at: createdAt ?? updatedAt ?? importedAt,
    updated_at: updatedAt ?? createdAt ?? importedAt,
  };
}

export function contactRecord(row: ContactImportRow, importedAt: string): CrmContact {
  const email = row.email?.toLowerCase() ?? null;
  return {
    // checkImportRow guarantees crm_id or email.
    crm_id: row.crm_id ?? email ?? '',
    email,
    lifecycle_stage: row.lifecycle_stage ?? null,
    company_crm_id: row.company_crm_id ?? null,
    updated_at: row.updated_at ? iso(row.updated_at) : importedAt,
  };
}

function reportRow(row: SpendImportRow): AdReportRowV1 {
  return compact<AdReportRowV1>({
    date: row.date,
    level: spendLevel(row),
    item_id: spendItemId(row) ?? row.account_id,
    item_name: row.item_name,
    campaign_id: row.campaign_id,
    campaign_name: row.campaign_name,
    campaign_type: row.campaign_type,
    ad_set_id: row.ad_set_id,
    ad_set_name: row.ad_set_name,
    ad_id: row.ad_id,
    ad_name: row.ad_name,
    spend: row.spend,
    impressions: row.impressions ?? 0,
    clicks: row.clicks ?? 0,
    platform_conversions: row.platform_conversions,
    platform_revenue: row.platform_revenue,
  });
}

/** One report per (platform, account, currency), rows in file order. */
export function spendReports(rows: readonly SpendImportRow[], scope: WebsiteScope): AdsReportImportedV1[] {
  const reports = new Map<string, AdsReportImportedV1>();
  for (const row of rows) {
    const key = [row.platform, row.account_id, row.currency].join('\u001f');
    let report = reports.get(key);
    if (!report) {
      report = { website_id: scope.websiteId, workspace_id: scope.workspaceId, platform: row.platform, account_id: row.account_id, account_name: null, currency: row.currency, rows: [] };
      reports.set(key, report);
    }
    report.account_name ??= row.account_name ?? null;
    report.rows.push(reportRow(row));
  }
  return [...reports.values()];
}

/**
 * Assembles orders from their rows (contiguous, as the CLI sends them: never split across
 * requests). A row of an order seen earlier in the request, or whose order fields disagree with
 * the order's first row, is rejected: it would restate the order without the rows before it.
 */
export function storeImports(rows: readonly Indexed<OrderImportRow>[], scope: WebsiteScope): { imports: StoreOrdersImportedV1[]; rejected: Rejection[] } {
  const rejected: Rejection[] = [];
  const orders: { platform: string; order: StoreOrderV1 }[] = [];
  const closed = new Set<string>();
  let currentKey: string | null = null;
  let current: StoreOrderV1 | null = null;
  for (const { index, row } of rows) {
    const key = orderKey(row);
    if (key !== currentKey) {
      if (closed.has(key)) {
        rejected.push({ index, reason: `the rows of order ${row.order_id} must be contiguous` });
        continue;
      }
      if (currentKey) closed.add(currentKey);
      currentKey = key;
      current = { order_id: row.order_id, ordered_at: iso(row.ordered_at), customer_email: row.customer_email?.toLowerCase() ?? null, currency: row.currency, lines: [], refunds: [] };
      orders.push({ platform: row.platform ?? 'import', order: current });
    } else if (current) {
      if (iso(row.ordered_at) !== current.ordered_at) {
        rejected.push({ index, reason: `ordered_at differs from the first row of order ${row.order_id}` });
        continue;
      }
      if (row.currency !== current.currency) {
        rejected.push({ index, reason: `currency differs from the first row of order ${row.order_id}` });
        continue;
      }
      current.customer_email ??= row.customer_email?.toLowerCase() ?? null;
    }
    if (!current) continue;
    if (row.refund_id !== undefined) {
      current.refunds.push(compact({
        refund_id: row.refund_id, refunded_at: iso(row.refunded_at ?? row.ordered_at), amount: row.refund_amount ?? 0,
        product_id: row.product_id ?? null, quantity: row.quantity ?? null,
      }));
    } else {
      current.lines.push(compact({
        product_id: row.product_id ?? '', name: row.product_name ?? row.product_id ?? '', quantity: row.quantity ?? 1,
        unit_price: row.unit_price ?? 0, unit_cost: row.unit_cost ?? null,
      }));
    }
  }
  const byPlatform = new Map<string, StoreOrdersImportedV1>();
  for (const { platform, order } of orders) {
    let message = byPlatform.get(platform);
    if (!message) {
      message = { website_id: scope.websiteId, workspace_id: scope.workspaceId, platform, orders: [] };
      byPlatform.set(platform, message);
    }
    message.orders.push(order);
  }
  return { imports: [...byPlatform.values()], rejected };
}
