// Opaque, signed cursors: they encode a sort position (never an offset), so paging stays stable
// while rows are inserted, and a cursor that was edited, truncated or signed by another instance
// is refused with a problem telling the client to restart paging.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ProblemError } from './errors';

export class CursorCodec {
  constructor(private readonly secret: string) {}

  /** `position` is any JSON value; `scope` binds the cursor to what it pages (endpoint + filters). */
  encode(scope: string, position: unknown): string {
    const body = Buffer.from(JSON.stringify({ s: scope, p: position })).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode<T>(scope: string, cursor: string): T {
    const [body, signature, extra] = cursor.split('.');
    const expected = body ? this.sign(body) : '';
    if (!body || !signature || extra !== undefined || signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
      throw invalidCursor('The cursor is not one this service issued (it was edited, truncated or comes from elsewhere).');
    }
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { s: string; p: T };
    if (parsed.s !== scope) throw invalidCursor('The cursor belongs to a different query (other filters or endpoint).');
    return parsed.p;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url').slice(0, 32);
  }
}

export function invalidCursor(detail: string): ProblemError {
  return new ProblemError('invalid-request', {
    detail,
    remediation: 'Restart paging without a cursor (or with `since` for the change feed), and pass cursors back exactly as received.',
  });
}
