// Bulk API 2.0 query jobs: create, poll (InProgress until bulkPollsBeforeDone), and CSV results
// paged by Sforce-Locator, as the Bulk API 2.0 guide documents.
import type { IncomingMessage } from 'node:http';
import { readBody, type BulkJob, type RouteAnswer, type ServerContext } from './context';
import { SalesforceApiError, notFound } from './errors';
import type { FieldDef } from './schema';
import { compileQuery } from './soql-eval';
import { sfDateTime } from './values';

function csvCell(field: FieldDef, v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = field.kind === 'datetime' ? new Date(v as number).toISOString() : String(v);
  return `"${s.replace(/"/g, '""')}"`;
}

export type BulkRoute = (req: IncomingMessage, version: string, parts: string[], query: URLSearchParams, label: (l: string) => void, allow: (methods: string[]) => void) => Promise<RouteAnswer | undefined>;

/** The jobs/query routes; answers undefined for a path they do not serve (the caller then 404s). */
export function bulkRoutes(ctx: ServerContext): BulkRoute {
  const { options, org, usernames, jobs, now, userId, opaque } = ctx;

  const jobInfo = (job: BulkJob, detail: boolean): Record<string, unknown> => ({
    id: job.id,
    operation: job.operation,
    object: job.object,
    createdById: userId([...usernames][0] ?? 'integration'),
    createdDate: sfDateTime(job.createdDate),
    systemModstamp: sfDateTime(job.systemModstamp),
    state: job.state,
    concurrencyMode: 'Parallel',
    contentType: 'CSV',
    apiVersion: job.apiVersion,
    lineEnding: 'LF',
    columnDelimiter: 'COMMA',
    ...(detail ? { jobType: 'V2Query', numberRecordsProcessed: job.rows?.length ?? 0, retries: 0, totalProcessingTime: job.state === 'JobComplete' ? 250 : 0, isPkChunkingSupported: true } : {}),
  });

  const bulkError = (status: number, errorCode: string, message: string): SalesforceApiError => new SalesforceApiError(status, errorCode, message);

  return async (req, version, parts, query, label, allow) => {
    const head = parts[0] ?? '';
    if (head === 'jobs' && parts[1] === 'query') {
      if (parts.length === 2) {
        allow(['POST']);
        label('bulkCreate');
        let body: { operation?: unknown; query?: unknown; contentType?: unknown; columnDelimiter?: unknown; lineEnding?: unknown };
        try {
          body = JSON.parse(await readBody(req));
        } catch {
          throw bulkError(400, 'InvalidJob', 'Unable to parse the job definition');
        }
        if (body.operation !== 'query' && body.operation !== 'queryAll') throw bulkError(400, 'API_ERROR', `Invalid operation: ${String(body.operation)}`);
        if (typeof body.query !== 'string') throw bulkError(400, 'API_ERROR', 'query is required');
        if ((body.contentType ?? 'CSV') !== 'CSV' || (body.columnDelimiter ?? 'COMMA') !== 'COMMA' || (body.lineEnding ?? 'LF') !== 'LF') throw bulkError(400, 'API_ERROR', 'This stand-in supports CSV with COMMA and LF only');
        const q = compileQuery(org, body.query);
        if (q.count !== 'none') throw bulkError(400, 'API_ERROR', 'Aggregate queries are not supported by Bulk API 2.0 query');
        if (q.ast.offset !== undefined) throw bulkError(400, 'API_ERROR', 'OFFSET is not supported by Bulk API 2.0 query');
        const t = now();
        const job: BulkJob = { id: opaque('750'), operation: body.operation, object: q.type, query: q, createdDate: t, systemModstamp: t, polls: 0, state: 'UploadComplete', apiVersion: Number(version.slice(1)) };
        jobs.set(job.id, job);
        return [200, jobInfo(job, false)];
      }
      const job = jobs.get(parts[2]!);
      if (parts.length === 3) {
        allow(['GET']);
        label('bulkStatus');
        if (!job) throw notFound();
        if (job.state !== 'JobComplete' && job.state !== 'Aborted') {
          job.polls += 1;
          if (job.polls > (options.bulkPollsBeforeDone ?? 1)) {
            job.rows = job.query.run(job.operation === 'queryAll');
            job.state = 'JobComplete';
          } else job.state = 'InProgress';
          job.systemModstamp = now();
        }
        return [200, jobInfo(job, true)];
      }
      if (parts.length === 4 && parts[3] === 'results') {
        allow(['GET']);
        label('bulkResults');
        if (!job) throw notFound();
        if (job.state !== 'JobComplete' || !job.rows) throw bulkError(400, 'API_ERROR', `Job ${job.id} is not complete: its state is ${job.state}`);
        const locator = query.get('locator');
        let offset = 0;
        if (locator) {
          const decoded = Number(Buffer.from(locator, 'base64url').toString('utf8'));
          if (!Number.isInteger(decoded) || decoded < 0 || decoded > job.rows.length) throw bulkError(400, 'API_ERROR', `Invalid locator: ${locator}`);
          offset = decoded;
        }
        const maxRecordsRaw = query.get('maxRecords');
        const maxRecords = maxRecordsRaw === null ? job.rows.length || 1 : Number(maxRecordsRaw);
        if (!Number.isInteger(maxRecords) || maxRecords < 1) throw bulkError(400, 'API_ERROR', `Invalid maxRecords: ${maxRecordsRaw}`);
        const page = job.rows.slice(offset, offset + maxRecords);
        const next = offset + page.length;
        const cols = job.query.projection.columns;
        const lines = [cols.map((c) => `"${c.header}"`).join(',')];
        for (const r of page) lines.push(cols.map((c) => csvCell(c.field, c.get(r))).join(','));
        return [
          200,
          lines.join('\n') + '\n',
          { 'Content-Type': 'text/csv', 'Sforce-Locator': next < job.rows.length ? Buffer.from(String(next)).toString('base64url') : 'null', 'Sforce-NumberOfRecords': String(page.length) },
        ];
      }
    }
    return undefined;
  };
}
