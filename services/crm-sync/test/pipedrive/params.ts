// Request parsing shared by the routes: PATCH custom_fields checks, limit / RFC 3339 / id query
// parameters, the opaque v2 list cursor, headers and the raw body.
import type { IncomingMessage } from 'node:http';
import { HttpError } from './types';

export function customFieldsOf(body: unknown, known: Set<string>): Record<string, unknown> {
  if (typeof body !== 'object' || body === null) throw new HttpError(400, 'Request body must be a JSON object');
  const fields = (body as Record<string, unknown>)['custom_fields'];
  if (fields === undefined) return {};
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new HttpError(400, 'custom_fields must be an object');
  for (const key of Object.keys(fields)) if (!known.has(key)) throw new HttpError(400, `Unknown custom field key: ${key}`);
  return fields as Record<string, unknown>;
}

export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new HttpError(400, 'limit must be a positive integer');
  // Pipedrive documents 500 as the most one page holds.
  return Math.min(n, 500);
}

export function rfc3339(raw: string, name: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(raw)) throw new HttpError(400, `${name} must be an RFC3339 date-time, e.g. 2025-01-01T10:20:00Z`);
  return Date.parse(raw);
}

export function matchId(raw: string | undefined, value: number | null): boolean {
  return raw === undefined || value === Number(raw);
}

export interface ListCursor { sortBy: string; direction: string; key: number; id: number }

export function encodeListCursor(c: ListCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

export function decodeListCursor(raw: string): ListCursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ListCursor;
    if (typeof c.key === 'number' && typeof c.id === 'number') return c;
  } catch {
    // fall through
  }
  throw new HttpError(400, 'Invalid cursor');
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
