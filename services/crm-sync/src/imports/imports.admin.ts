// POST /admin/crm/imports/:kind?website=<domain>: one batch of file rows from `sightline import`.
// Body: {website_id, workspace_id, rows} (the CLI resolved the domain through the gateway's admin
// API). Every row is checked again here; the valid ones are applied in one transaction:
//   deals, companies, contacts → the mirror (provider 'import'), with the messages applyRecords implies;
//   spend → one ads.report_imported per (platform, account, currency);
//   orders → one store.orders_imported per platform (an order's rows never span two requests).
// Answers {accepted, rejected: [{index, reason}], messages}. Re-sending a batch is harmless: the
// mirror updates in place and announces nothing new; attribution keeps the newest copy of a spend
// row or an order.
import type { Request, Router } from 'express';
import { adminRoute, ProblemError, type OutboxMessage, type SqlExecutor } from '@sightline/kit';
import type { CrmSyncDeps } from '../deps';
import { applyRecords } from '../mirror';
import type { CrmPipeline, CrmRecords, MirrorScope } from '../records';
import { companyRecord, contactRecord, dealRecord, mergePipelines, pipelineIdsOf, spendReports, storeImports, type Indexed, type Rejection, type WebsiteScope } from './convert';
import { checkImportRow } from './rows';
import { IMPORT_KINDS, isImportKind, type ImportKind, type ImportRows } from './schemas';

/** Rows per request at most (the CLI also keeps each request under the 100 kB admin body limit). */
export const MAX_IMPORT_BATCH_ROWS = 500;
export const IMPORT_PROVIDER = 'import';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ImportBatchResult {
  accepted: number;
  rejected: Rejection[];
  /** Messages the batch added to the outbox (0 when a re-import changed nothing in the mirror). */
  messages: number;
}

interface ImportBatch {
  kind: ImportKind;
  scope: WebsiteScope;
  rows: unknown[];
}

function batchOf(req: Request): ImportBatch {
  const kind = String(req.params['kind']);
  if (!isImportKind(kind)) {
    throw new ProblemError('invalid-request', { detail: `Unknown import kind "${kind}".`, remediation: 'Use one of the listed kinds.', allowed: [...IMPORT_KINDS] });
  }
  const body = (req.body ?? {}) as Record<string, unknown>;
  const websiteId = body['website_id'];
  const workspaceId = body['workspace_id'];
  if (typeof websiteId !== 'string' || !UUID.test(websiteId) || typeof workspaceId !== 'string' || !UUID.test(workspaceId)) {
    throw new ProblemError('invalid-request', {
      detail: 'website_id and workspace_id (UUIDs) are required.',
      remediation: 'Resolve the website with GET /admin/websites/<domain> first (`sightline import` does).',
    });
  }
  const rows = body['rows'];
  if (!Array.isArray(rows) || rows.length === 0 || rows.length > MAX_IMPORT_BATCH_ROWS) {
    throw new ProblemError('invalid-request', { detail: `rows must be an array of 1 to ${MAX_IMPORT_BATCH_ROWS} rows.`, remediation: 'Send the file in batches.' });
  }
  return { kind, scope: { websiteId, workspaceId }, rows };
}

function checkAll<K extends ImportKind>(kind: K, rows: readonly unknown[]): { valid: Indexed<ImportRows[K]>[]; rejected: Rejection[] } {
  const valid: Indexed<ImportRows[K]>[] = [];
  const rejected: Rejection[] = [];
  rows.forEach((raw, index) => {
    const checked = checkImportRow(kind, raw);
    if (checked.ok) valid.push({ index, row: checked.row });
    else rejected.push({ index, reason: checked.reason });
  });
  return { valid, rejected };
}

async function storedPipelines(tx: SqlExecutor, scope: MirrorScope, ids: string[]): Promise<Map<string, CrmPipeline>> {
  if (ids.length === 0) return new Map();
  const result = await tx.query<CrmPipeline>(
    'SELECT id, name, stages FROM pipelines WHERE website_id = $1 AND provider = $2 AND id = ANY($3)',
    [scope.websiteId, scope.provider, ids],
  );
  return new Map(result.rows.map((p) => [p.id, p]));
}

async function applyMirrorBatch(deps: CrmSyncDeps, batch: ImportBatch): Promise<ImportBatchResult> {
  const scope: MirrorScope = { ...batch.scope, provider: IMPORT_PROVIDER, source: IMPORT_PROVIDER };
  const importedAt = new Date().toISOString();
  let checked: { valid: unknown[]; rejected: Rejection[] };
  let recordsIn: (tx: SqlExecutor) => Promise<CrmRecords>;
  if (batch.kind === 'deals') {
    const deals = checkAll('deals', batch.rows);
    const rows = deals.valid.map((v) => v.row);
    checked = deals;
    // Stages are merged into the stored import pipelines inside the transaction that applies the deals.
    recordsIn = async (tx) => ({ pipelines: mergePipelines(rows, await storedPipelines(tx, scope, pipelineIdsOf(rows))), deals: rows.map(dealRecord) });
  } else if (batch.kind === 'companies') {
    const companies = checkAll('companies', batch.rows);
    checked = companies;
    recordsIn = async () => ({ companies: companies.valid.map((v) => companyRecord(v.row, importedAt)) });
  } else {
    const contacts = checkAll('contacts', batch.rows);
    checked = contacts;
    recordsIn = async () => ({ contacts: contacts.valid.map((v) => contactRecord(v.row, importedAt)) });
  }
  const messages = await deps.sql.transaction(async (tx) => (await applyRecords(tx, deps.outbox, scope, await recordsIn(tx))).messages);
  deps.outbox.wake();
  return { accepted: checked.valid.length, rejected: checked.rejected, messages };
}

async function publishBatch(deps: CrmSyncDeps, batch: ImportBatch): Promise<ImportBatchResult> {
  let outgoing: OutboxMessage<'ads.report_imported' | 'store.orders_imported'>[];
  let accepted: number;
  let rejected: Rejection[];
  const envelope = { workspace_id: batch.scope.workspaceId, website_id: batch.scope.websiteId, source: IMPORT_PROVIDER };
  if (batch.kind === 'spend') {
    const spend = checkAll('spend', batch.rows);
    outgoing = spendReports(spend.valid.map((v) => v.row), batch.scope).map((payload) => ({ ...envelope, type: 'ads.report_imported', payload }));
    accepted = spend.valid.length;
    rejected = spend.rejected;
  } else {
    const orders = checkAll('orders', batch.rows);
    const assembled = storeImports(orders.valid, batch.scope);
    outgoing = assembled.imports.map((payload) => ({ ...envelope, type: 'store.orders_imported', payload }));
    accepted = orders.valid.length - assembled.rejected.length;
    rejected = [...orders.rejected, ...assembled.rejected].sort((a, b) => a.index - b.index);
  }
  if (outgoing.length > 0) {
    await deps.sql.transaction(async (tx) => {
      for (const message of outgoing) await deps.outbox.add(tx, message);
    });
    deps.outbox.wake();
  }
  return { accepted, rejected, messages: outgoing.length };
}

export function importAdminRoutes(router: Router, deps: CrmSyncDeps): void {
  router.post('/crm/imports/:kind', adminRoute(async (req: Request) => {
    const batch = batchOf(req);
    const result: ImportBatchResult = batch.kind === 'spend' || batch.kind === 'orders' ? await publishBatch(deps, batch) : await applyMirrorBatch(deps, batch);
    deps.logger.debug({ kind: batch.kind, website: req.query['website'], websiteId: batch.scope.websiteId, ...result, rejected: result.rejected.length }, 'import batch applied');
    return { status: 200, body: result };
  }));
}
