// The org's REST data routes: query / queryMore / queryAll (cursor pages), sObject Get Deleted,
// sObject Rows PATCH, sObject Collections PATCH and limits; Bulk API jobs are delegated to bulk.ts.
import type { IncomingMessage } from 'node:http';
import { bulkRoutes } from './bulk';
import { readBody, type Cursor, type ServerContext } from './context';
import { SalesforceApiError, notFound } from './errors';
import { normalizeId } from './ids';
import { compileQuery, renderRecord } from './soql-eval';
import { sfDateTime, toMs } from './values';

/** Builds the data-call router for one server; state lives in ctx. */
export function restRoutes(ctx: ServerContext): (req: IncomingMessage, version: string, rest: string, query: URLSearchParams, label: (l: string) => void) => Promise<[number, unknown, Record<string, string>?]> {
  const { org, cursors, jobs, batchSize, retentionMs, cursorIdleMs, now, opaque } = ctx;
  const bulk = bulkRoutes(ctx);

  const queryPage = (version: string, cursorId: string, cursor: Cursor, offset: number): Record<string, unknown> => {
    const page = cursor.rows.slice(offset, offset + cursor.pageSize);
    const next = offset + page.length;
    const done = next >= cursor.rows.length;
    cursor.lastUsed = now();
    if (done) cursors.delete(cursorId);
    return {
      totalSize: cursor.rows.length,
      done,
      ...(done ? {} : { nextRecordsUrl: `/services/data/${version}/${cursor.resource}/${cursorId}-${next}` }),
      records: page.map((r) => renderRecord(org, version, cursor.projection.tree, r)),
    };
  };

  /** Sforce-Query-Options: batchSize=n asks for smaller batches (200–2,000); Salesforce treats it as a hint. */
  const requestedBatch = (req: IncomingMessage): number => {
    const m = /batchSize\s*=\s*(\d+)/i.exec(String(req.headers['sforce-query-options'] ?? ''));
    return m ? Math.min(batchSize, Math.max(200, Number(m[1]))) : batchSize;
  };

  const runQuery = (version: string, resource: 'query' | 'queryAll', soql: string | null, pageSize: number): Record<string, unknown> => {
    if (!soql) throw new SalesforceApiError(400, 'MALFORMED_QUERY', 'A query string has to be specified');
    const q = compileQuery(org, soql);
    const rows = q.run(resource === 'queryAll');
    if (q.count === 'plain') return { totalSize: rows.length, done: true, records: [] };
    if (q.count === 'field') return { totalSize: 1, done: true, records: [{ attributes: { type: 'AggregateResult' }, expr0: rows.length }] };
    const id = opaque('01g');
    const cursor: Cursor = { rows, pageSize, projection: q.projection, resource, lastUsed: now() };
    cursors.set(id, cursor);
    return queryPage(version, id, cursor, 0);
  };

  const getDeleted = (typeName: string, query: URLSearchParams): unknown => {
    const def = org.object(typeName);
    if (!def || !def.fields.has('isdeleted')) throw notFound();
    const startS = query.get('start');
    const endS = query.get('end');
    if (!startS || !endS) throw new SalesforceApiError(400, 'MISSING_ARGUMENT', `Missing required parameter: ${!startS ? 'start' : 'end'}`);
    let start: number;
    let end: number;
    try {
      start = toMs(startS);
      end = toMs(endS);
    } catch {
      throw new SalesforceApiError(400, 'INVALID_REPLICATION_DATE', 'start and end must be valid dateTime values');
    }
    // The delete log works to the minute: seconds are dropped from both ends.
    start = Math.floor(start / 60000) * 60000;
    end = Math.floor(end / 60000) * 60000;
    const t = now();
    const earliest = Math.floor((t - retentionMs) / 60000) * 60000;
    if (end - start < 60000) throw new SalesforceApiError(400, 'INVALID_REPLICATION_DATE', 'startDate must chronologically precede endDate by more than one minute');
    if (start < earliest) throw new SalesforceApiError(400, 'INVALID_REPLICATION_DATE', `startDate cannot be earlier than ${sfDateTime(earliest)}`);
    const covered = Math.min(end, Math.floor(t / 60000) * 60000);
    const deletedRecords: { id: string; deletedDate: string }[] = [];
    for (const r of org.table(def.name).rows) {
      if (r['IsDeleted'] !== true) continue;
      const d = r['SystemModstamp'] as number;
      if (d >= start && d < covered) deletedRecords.push({ id: r['Id'] as string, deletedDate: sfDateTime(d) });
    }
    return { deletedRecords, earliestDateAvailable: sfDateTime(earliest), latestDateCovered: sfDateTime(covered) };
  };

  const collectionsUpdate = (body: unknown): unknown => {
    const b = body as { allOrNone?: unknown; records?: unknown };
    if (typeof b !== 'object' || b === null || !Array.isArray(b.records)) throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'records is required and must be an array');
    if (b.records.length > 200) throw new SalesforceApiError(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call');
    const allOrNone = b.allOrNone === true;
    type Result = { id: string | null; success: boolean; errors: { statusCode: string; message: string; fields: string[] }[] };
    const plans: { rec: Record<string, unknown>; type: string; id: string; result: Result }[] = [];
    for (const raw of b.records as unknown[]) {
      const rec = (raw ?? {}) as Record<string, unknown>;
      const type = (rec['attributes'] as { type?: unknown } | undefined)?.type;
      const id = typeof rec['id'] === 'string' ? rec['id'] : typeof rec['Id'] === 'string' ? rec['Id'] : null;
      const result: Result = { id: id ? normalizeId(id) : null, success: true, errors: [] };
      const fail = (statusCode: string, message: string, fields: string[] = []): void => {
        result.success = false;
        result.errors.push({ statusCode, message, fields });
      };
      if (typeof type !== 'string') fail('INVALID_TYPE', 'sObject type is required in attributes');
      else if (!id) fail('MISSING_ARGUMENT', 'Id not specified in an update call');
      else {
        const fields: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(rec)) if (k !== 'attributes' && k.toLowerCase() !== 'id') fields[k] = v;
        const existing = org.object(type) ? org.row(org.object(type)!.name, id) : undefined;
        if (!org.object(type)) fail('INVALID_TYPE', `sObject type '${type}' is not supported.`);
        else if (!existing) fail('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id');
        else if (existing['IsDeleted'] === true) fail('ENTITY_IS_DELETED', 'entity is deleted');
        else
          try {
            org.apiUpdate(type, id, fields, true);
          } catch (e) {
            if (e instanceof SalesforceApiError) fail(e.errorCode, e.message, e.fields ?? []);
            else throw e;
          }
        plans.push({ rec: fields, type, id, result });
        continue;
      }
      plans.push({ rec, type: String(type), id: id ?? '', result });
    }
    const anyFailed = plans.some((p) => !p.result.success);
    if (allOrNone && anyFailed) {
      return plans.map((p) =>
        p.result.success ? { id: p.result.id, success: false, errors: [{ statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK', message: 'Record rolled back because not all records were valid and the request was using AllOrNone header', fields: [] }] } : p.result,
      );
    }
    for (const p of plans) if (p.result.success) org.apiUpdate(p.type, p.id, p.rec);
    return plans.map((p) => p.result);
  };

  /** Routes an authenticated, counted data call. Returns [status, body, extra headers]. */
  const route = async (req: IncomingMessage, version: string, rest: string, query: URLSearchParams, label: (l: string) => void): Promise<[number, unknown, Record<string, string>?]> => {
    const method = req.method ?? 'GET';
    const parts = rest.split('/').filter((s) => s !== '');
    const allow = (methods: string[]): void => {
      if (!methods.includes(method)) throw new SalesforceApiError(405, 'METHOD_NOT_ALLOWED', `HTTP Method '${method}' not allowed. Allowed are ${methods.join(',')}`);
    };
    const head = parts[0] ?? '';
    if ((head === 'query' || head === 'queryAll') && parts.length <= 2) {
      allow(['GET']);
      if (parts.length === 1) {
        label(head);
        return [200, runQuery(version, head, query.get('q'), requestedBatch(req))];
      }
      label('queryMore');
      const m = /^(.+)-(\d+)$/.exec(parts[1]!);
      const cursor = m ? cursors.get(m[1]!) : undefined;
      if (!m || !cursor || now() - cursor.lastUsed > cursorIdleMs) {
        if (m) cursors.delete(m[1]!);
        throw new SalesforceApiError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
      }
      return [200, queryPage(version, m[1]!, cursor, Number(m[2]))];
    }
    if (head === 'limits' && parts.length === 1) {
      allow(['GET']);
      label('limits');
      const bulkJobsToday = jobs.size;
      return [
        200,
        {
          DailyApiRequests: { Max: ctx.max, Remaining: Math.max(0, ctx.max - ctx.used) },
          DailyBulkV2QueryJobs: { Max: 10000, Remaining: Math.max(0, 10000 - bulkJobsToday) },
          DailyBulkV2QueryFileStorageMB: { Max: 976562, Remaining: 976562 },
          DailyAsyncApexExecutions: { Max: 250000, Remaining: 250000 },
          DataStorageMB: { Max: 1024, Remaining: 1000 },
        },
      ];
    }
    if (head === 'sobjects' && parts.length >= 3 && parts[2] === 'deleted') {
      allow(['GET']);
      label('getDeleted');
      return [200, getDeleted(parts[1]!, query)];
    }
    if (head === 'sobjects' && parts.length === 3) {
      allow(['PATCH']);
      label('patchRecord');
      const text = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'Unexpected character in request body');
      }
      org.apiUpdate(parts[1]!, parts[2]!, body);
      return [204, undefined];
    }
    if (head === 'composite' && parts[1] === 'sobjects' && parts.length === 2) {
      allow(['PATCH']);
      label('collectionsUpdate');
      const text = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'Unexpected character in request body');
      }
      return [200, collectionsUpdate(body)];
    }
    const bulkAnswer = await bulk(req, version, parts, query, label, allow);
    if (bulkAnswer) return bulkAnswer;
    label('unknown');
    throw notFound();
  };

  return route;
}
