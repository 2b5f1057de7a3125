// `sightline import <kind> --website <domain> FILE`: streams a CSV or NDJSON file, checks every row
// against the kind's schema (the rules crm-sync applies again on arrival), reports rejected rows
// by line number, and sends the accepted ones in batches to crm-sync's admin route
// POST /admin/crm/imports/<kind>. Batches stay under the admin body limit (100 kB) and 500 rows;
// an order's rows always travel together. One batch is in flight while the next is read.
import { createWriteStream, writeFileSync, type WriteStream } from 'node:fs';
import { checkImportRow, IMPORT_ROW_SCHEMAS, MAX_IMPORT_BATCH_ROWS, orderKey, type ImportBatchResult, type ImportKind } from '@sightline/service-crm-sync';
import { adminRequest, type AdminConnection } from './admin-client';
import { startProgress, type ImportCounters, type ProgressOptions } from './import-progress';
import { openRowSource, type ImportFormat } from './import-source';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Rejections kept in memory for the summary (all of them go to --rejects). */
export const PRINTED_REJECTS = 100;
/** Bytes of rows per request; the admin API takes bodies up to 100 kB (102 400 bytes). */
export const DEFAULT_BATCH_BYTES = 96_000;

export interface ImportOptions {
  kind: ImportKind;
  file: string;
  /** The website the rows belong to: its domain (resolved through the gateway's admin API), or its id with `workspace`. */
  website: string;
  /** The website's workspace id: with a website id, no lookup is made (crm-sync in a process of its own). */
  workspace?: string;
  format: ImportFormat;
  delimiter?: string;
  /** Every rejection, one `line N: reason` per line, goes here when set. */
  rejectsFile?: string;
  batchRows?: number;
  batchBytes?: number;
  progress: ProgressOptions;
}

export interface ImportSummary {
  rows: number;
  accepted: number;
  rejected: number;
  /** Messages crm-sync added to its outbox (0 for a re-import that changed nothing in the mirror). */
  messages: number;
  requests: number;
  seconds: number;
  /** The first PRINTED_REJECTS rejections, `line N: reason`, in file order. */
  firstRejects: string[];
}

interface Batch {
  rows: unknown[];
  lines: number[];
  bytes: number;
}

interface PendingRow {
  row: unknown;
  line: number;
  bytes: number;
}

interface OrderRows {
  key: string;
  id: string;
  rows: PendingRow[];
}

const emptyBatch = (): Batch => ({ rows: [], lines: [], bytes: 0 });

/** Columns the file may not have, or must have, given its header. */
function headerProblem(kind: ImportKind, columns: readonly string[]): string | null {
  const schema = IMPORT_ROW_SCHEMAS[kind];
  const known = Object.keys(schema.properties);
  const unknown = columns.filter((c) => !known.includes(c));
  if (unknown.length > 0) return `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((c) => `"${c}"`).join(', ')}; ${kind} columns are: ${known.join(', ')}`;
  const duplicate = columns.find((c, i) => columns.indexOf(c) !== i);
  if (duplicate) return `column "${duplicate}" appears twice`;
  const missing = schema.required.filter((c) => !columns.includes(c));
  if (kind === 'contacts' && !columns.includes('crm_id') && !columns.includes('email')) missing.push('crm_id or email');
  if (missing.length > 0) return `missing column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `"${c}"`).join(', ')} (see \`sightline import ${kind} --schema\`)`;
  return null;
}

export async function importFile(conn: AdminConnection, options: ImportOptions): Promise<ImportSummary> {
  const maxRows = Math.min(options.batchRows ?? MAX_IMPORT_BATCH_ROWS, MAX_IMPORT_BATCH_ROWS);
  const maxBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES;
  const website = UUID.test(options.website) && options.workspace
    ? { id: options.website, workspace_id: options.workspace }
    : await adminRequest<{ id: string; workspace_id: string }>(conn, 'GET', `/websites/${encodeURIComponent(options.website)}`);
  const source = openRowSource(options.file, options.format, options.delimiter ? { delimiter: options.delimiter } : {});
  const counters: ImportCounters = { bytesRead: 0, totalBytes: source.totalBytes, rows: 0, accepted: 0, rejected: 0 };
  const firstRejects: { line: number; text: string }[] = [];
  if (options.rejectsFile) writeFileSync(options.rejectsFile, ''); // an unwritable path fails here, before any row is sent
  const rejectsOut: WriteStream | null = options.rejectsFile ? createWriteStream(options.rejectsFile, { flags: 'a' }) : null;
  const started = Date.now();
  let messages = 0;
  let requests = 0;

  const reject = (line: number, reason: string): void => {
    counters.rejected += 1;
    const text = `line ${line}: ${reason}`;
    if (firstRejects.length < PRINTED_REJECTS || line < (firstRejects[firstRejects.length - 1]?.line ?? 0)) {
      // Server rejections arrive after later lines were read: keep the earliest lines.
      firstRejects.push({ line, text });
      firstRejects.sort((a, b) => a.line - b.line);
      if (firstRejects.length > PRINTED_REJECTS) firstRejects.pop();
    }
    rejectsOut?.write(`${text}\n`);
  };

  const path = `/crm/imports/${options.kind}?website=${encodeURIComponent(options.website)}`;
  const send = async (batch: Batch): Promise<void> => {
    requests += 1;
    let result: ImportBatchResult;
    try {
      result = await adminRequest<ImportBatchResult>(conn, 'POST', path, { website_id: website.id, workspace_id: website.workspace_id, rows: batch.rows });
    } catch (error) {
      // A non-JSON answer is express's own 404: no crm-sync behind this admin URL.
      const reason = error instanceof SyntaxError
        ? `${conn.url} has no import route: crm-sync does not run behind this admin URL (run it there, or pass the admin URL of its process)`
        : (error as Error).message;
      throw new Error(
        `import stopped at line ${batch.lines[0] ?? '?'}: ${reason}\n` +
          '  Rows before that line were imported; importing the same file again is safe (nothing is duplicated).',
      );
    }
    counters.accepted += result.accepted;
    messages += result.messages;
    for (const r of result.rejected) reject(batch.lines[r.index] ?? 0, r.reason);
  };

  let inFlight: Promise<void> = Promise.resolve();
  let batch = emptyBatch();
  const flush = async (): Promise<void> => {
    if (batch.rows.length === 0) return;
    const full = batch;
    batch = emptyBatch();
    await inFlight; // one request at a time, in file order
    inFlight = send(full);
    inFlight.catch(() => undefined); // surfaced by the next await
  };
  const add = async (rows: readonly PendingRow[]): Promise<void> => {
    const bytes = rows.reduce((sum, r) => sum + r.bytes, 0);
    if (batch.rows.length + rows.length > maxRows || batch.bytes + bytes > maxBytes) await flush();
    for (const r of rows) {
      batch.rows.push(r.row);
      batch.lines.push(r.line);
    }
    batch.bytes += bytes;
  };

  // Orders: the rows of one order are held until the next order starts, then sent together.
  const pending: { order: OrderRows | null } = { order: null };
  const orderStarts = new Map<string, number>();
  const closeOrder = async (): Promise<void> => {
    const order = pending.order;
    if (!order) return;
    pending.order = null;
    const bytes = order.rows.reduce((sum, r) => sum + r.bytes, 0);
    if (order.rows.length > maxRows || bytes > maxBytes) {
      for (const r of order.rows) reject(r.line, `order ${order.id} has more rows than one request carries (${maxRows} rows, ${maxBytes} bytes)`);
    } else {
      await add(order.rows);
    }
  };

  const progress = startProgress(`import ${options.kind}`, () => ({ ...counters, bytesRead: source.bytesRead() }), options.progress);
  try {
    for await (const item of source.items) {
      if (item.kind === 'header') {
        const problem = headerProblem(options.kind, item.columns);
        if (problem) throw new Error(`${options.file}: ${problem}`);
        continue;
      }
      counters.rows += 1;
      if (item.kind === 'error') {
        reject(item.line, item.reason);
        continue;
      }
      const checked = checkImportRow(options.kind, item.value);
      if (!checked.ok) {
        reject(item.line, checked.reason);
        continue;
      }
      const bytes = Buffer.byteLength(JSON.stringify(checked.row)) + 1;
      if (bytes > maxBytes) {
        reject(item.line, `the row is too large (${bytes} bytes; at most ${maxBytes})`);
        continue;
      }
      if (options.kind !== 'orders') {
        await add([{ row: checked.row, line: item.line, bytes }]);
        continue;
      }
      const ordered = checked.row as { platform?: string; order_id: string };
      const key = orderKey(ordered);
      let order = pending.order;
      if (order?.key !== key) {
        const began = orderStarts.get(key);
        if (began !== undefined) {
          reject(item.line, `the rows of order ${ordered.order_id} must be contiguous (it began on line ${began})`);
          continue;
        }
        await closeOrder();
        orderStarts.set(key, item.line);
        order = { key, id: ordered.order_id, rows: [] };
        pending.order = order;
      }
      order.rows.push({ row: checked.row, line: item.line, bytes });
    }
    await closeOrder();
    await flush();
    await inFlight;
  } finally {
    progress.stop();
    if (rejectsOut) await new Promise<void>((resolve) => rejectsOut.end(resolve));
  }
  return {
    rows: counters.rows,
    accepted: counters.accepted,
    rejected: counters.rejected,
    messages,
    requests,
    seconds: (Date.now() - started) / 1000,
    firstRejects: firstRejects.map((r) => r.text),
  };
}
