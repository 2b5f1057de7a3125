// The three public operations: list (keyset paged, masked without pii:read), one contact with
// its value history, and the outcome PATCH. A PATCH writes the ledger, the value history, the
// idempotency record and the outbox messages in one transaction, so a crash or a broker outage
// can neither half-apply it nor lose the change it announces.
import { createHash } from 'node:crypto';
import { CursorCodec, maskPersonal, metaHead, piiNote, PII_SCOPE, ProblemError, type Outbox, type RpcMap, type SqlStore } from '@sightline/kit';
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import { outcomeOf, type ContactRow, type ContactsRepo, type HistoryRow, type ListFilters, type Position } from './contacts.repo';
import { writeOutcome } from './outcome-write';
import { diffPatch, parsePatch } from './patch';
import { resolveWindow } from './window';
import { presentWriteback, writebackStatuses } from './writeback-status';

export interface ContactsRpcDeps {
  sql: SqlStore;
  repo: ContactsRepo;
  outbox: Outbox<'contacts'>;
  cursorSecret: string;
}

// A type alias (not an interface) so it fits ApiRequest's Record<string, unknown> query.
type ListQuery = {
  period?: string;
  from?: string;
  to?: string;
  type?: string;
  event_name?: string;
  status?: string;
  email?: string;
  include_spam?: boolean | string;
  cursor?: string;
  limit?: number | string;
  total_count?: boolean | string;
};

/** meta.pii_note of a masked answer. */
export const PII_NOTE = piiNote('Email, phone and name', 'to filter by email');

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const API_REASON = 'updated through the API';

/** The public shape of a row (personal fields in full; masking is applied after). */
function present(row: ContactRow) {
  return {
    id: row.id,
    // A conversion without any identifier is a person of its own.
    identity_id: row.identity_id ?? row.id,
    type: row.event_type,
    event_name: row.event_name,
    occurred_at: row.occurred_at.toISOString(),
    email: row.email,
    phone: row.phone,
    name: row.name,
    ...outcomeOf(row),
    first_touch: row.first_touch,
    last_touch: row.last_touch,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function presentHistory(entry: HistoryRow) {
  return { ...entry, changed_at: entry.changed_at.toISOString() };
}

const flag = (value: boolean | string | undefined, fallback: boolean): boolean => (value === undefined ? fallback : value === true || value === 'true');

function requireWebsite(request: ApiRequest): NonNullable<ApiRequest['website']> {
  if (!request.website) throw new Error(`contacts.${request.operation} needs a resolved website`);
  return request.website;
}

/** A stored PATCH answer as a caller without pii:read may see it: personal fields masked, meta saying so. */
function maskedFor(response: unknown, piiIncluded: boolean): unknown {
  if (piiIncluded || response === null || typeof response !== 'object') return response;
  const body = response as { data?: unknown; meta?: Record<string, unknown> };
  const data = body.data && typeof body.data === 'object' ? maskPersonal(body.data as Parameters<typeof maskPersonal>[0]) : body.data;
  return { ...body, data, ...(body.meta ? { meta: { ...body.meta, pii_included: false, pii_note: PII_NOTE } } : {}) };
}

function notFound(id: string): ProblemError {
  return new ProblemError('not-found', {
    detail: `No contact ${id} on this website.`,
    remediation: 'Check the id (from GET /v1/contacts) and the website it belongs to.',
  });
}

export function contactsRpcHandlers(deps: ContactsRpcDeps): RpcMap<'contacts'> {
  const cursors = new CursorCodec(deps.cursorSecret);
  const { repo, sql, outbox } = deps;

  const detail = async (row: ContactRow, piiIncluded: boolean, db: Parameters<ContactsRepo['history']>[1] = sql) => {
    const history = await repo.history(row.id, db);
    const writeback = await writebackStatuses(db, row.id);
    const base = present(row);
    return {
      ...(piiIncluded ? base : maskPersonal(base)),
      // Deal links arrive with crm-sync; until then a contact is on no deal.
      deals: [] as unknown[],
      value_history: history.map(presentHistory),
      writeback: writeback.map(presentWriteback),
    };
  };

  const metaOf = (request: ApiRequest, piiIncluded: boolean) => {
    const website = requireWebsite(request);
    return {
      ...metaHead(website),
      pii_included: piiIncluded,
      ...(piiIncluded ? {} : { pii_note: PII_NOTE }),
    };
  };

  return {
    'contacts.listContacts': async (request: ApiRequest<ListQuery>): Promise<ApiResponse> => {
      const website = requireWebsite(request);
      const query = request.query;
      const piiIncluded = request.key.scopes.includes(PII_SCOPE);
      if (query.email !== undefined && !piiIncluded) {
        throw new ProblemError('insufficient-scope', {
          detail: 'Filtering contacts by email needs the scope "pii:read", which this key lacks.',
          remediation: 'Use a key with the "pii:read" scope, or filter without `email`.',
          extra: { missing_scope: PII_SCOPE },
        });
      }
      const window = resolveWindow({ period: query.period, from: query.from, to: query.to }, website.timezone);
      const filters: ListFilters = {
        websiteId: website.id,
        from: window.from,
        to: window.to,
        type: query.type,
        eventName: query.event_name,
        status: query.status,
        email: query.email?.toLowerCase(),
        includeSpam: flag(query.include_spam, false),
      };
      const limit = Math.min(MAX_LIMIT, Math.max(1, Number(query.limit ?? DEFAULT_LIMIT) || DEFAULT_LIMIT));
      // The cursor is bound to everything that selects rows, so it cannot page another query.
      const scope = JSON.stringify(['contacts', filters.websiteId, filters.from, filters.to, filters.type, filters.eventName, filters.status, filters.email, filters.includeSpam]);
      const position = query.cursor === undefined ? null : cursors.decode<Position>(scope, query.cursor);
      if (position !== null && !(Array.isArray(position) && position.length === 2 && position.every((p) => typeof p === 'string'))) {
        throw new ProblemError('invalid-request', { detail: 'The cursor does not hold a position.', remediation: 'Restart paging without a cursor.' });
      }
      const rows = await repo.list(filters, position, limit + 1);
      const hasMore = rows.length > limit;
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const totalCount = flag(query.total_count, false) ? await repo.count(filters) : null;
      const now = new Date();
      const body: Record<string, unknown> = {
        data: page.map((row) => (piiIncluded ? present(row) : maskPersonal(present(row)))),
        meta: {
          ...metaOf(request, piiIncluded),
          // No period and no from/to: every conversion (all time); `to` is then the time of the answer.
          window: { from: (window.from ?? new Date(0)).toISOString(), to: (window.to ?? now).toISOString(), expression: window.expression },
          row_count: page.length,
          truncated: hasMore,
          has_more: hasMore,
          total_count: totalCount,
        },
      };
      if (hasMore && last) body['next_cursor'] = cursors.encode(scope, [last.sort_at, last.id] satisfies Position);
      return { status: 200, body };
    },

    'contacts.getContact': async (request: ApiRequest): Promise<ApiResponse> => {
      const website = requireWebsite(request);
      const id = String(request.params['id']);
      const row = await repo.get(website.id, id);
      if (!row) throw notFound(id);
      const piiIncluded = request.key.scopes.includes(PII_SCOPE);
      return { status: 200, body: { data: await detail(row, piiIncluded), meta: metaOf(request, piiIncluded) } };
    },

    'contacts.patchContact': async (request: ApiRequest): Promise<ApiResponse> => {
      const website = requireWebsite(request);
      const id = String(request.params['id']);
      const patch = parsePatch(request.body ?? {});
      const piiIncluded = request.key.scopes.includes(PII_SCOPE);
      const source = `api:${request.key.id}`;
      const key = request.headers.idempotency_key ?? null;
      const requestHash = createHash('sha256').update(JSON.stringify([website.id, id, patch])).digest('hex');

      let wrote = false;
      const reply = await sql.transaction(async (tx): Promise<ApiResponse> => {
        if (key !== null) {
          const stored = await repo.lockIdempotencyKey(tx, request.workspace.id, request.key.id, key);
          if (stored) {
            if (stored.request_hash !== requestHash) {
              throw new ProblemError('conflict', {
                detail: 'This Idempotency-Key was already used with a different request.',
                remediation: 'Use a new Idempotency-Key for a new request; reuse a key only to retry the identical request.',
              });
            }
            // The stored answer is shown as this caller may see it (masking twice changes nothing).
            return { status: stored.status, body: maskedFor(stored.response, piiIncluded), headers: { 'Idempotent-Replayed': 'true' } };
          }
        }
        const row = await repo.get(website.id, id, tx, true);
        if (!row) throw notFound(id);
        const changes = diffPatch(outcomeOf(row), patch);
        // Nothing changes: nothing is written, not even the idempotency record.
        if (changes.length === 0) return { status: 200, body: { data: await detail(row, piiIncluded, tx), meta: metaOf(request, piiIncluded) } };

        const { updated, messages } = await writeOutcome(tx, repo, { row, changes, reason: API_REASON, source });
        await outbox.addMany(tx, messages);

        const result: ApiResponse = { status: 200, body: { data: await detail(updated, piiIncluded, tx), meta: metaOf(request, piiIncluded) } };
        if (key !== null) await repo.storeReply(tx, request.workspace.id, request.key.id, key, { request_hash: requestHash, status: result.status, response: result.body });
        wrote = true;
        return result;
      });
      if (wrote) outbox.wake();
      return reply;
    },
  };
}
