// The ledger's SQL (Postgres and PGlite alike). Values always travel as bound parameters.
import type { SqlExecutor, SqlStore } from '@sightline/kit';
import type { AttributedTouchV1, ConversionCreatedV1 } from '@sightline/proto-schemas';
import type { FieldChange, OutcomeFields } from './patch';

export interface ContactRow {
  id: string;
  workspace_id: string;
  website_id: string;
  identity_id: string | null;
  email: string | null;
  phone: string | null;
  name: string | null;
  /** Consent for ad personalisation from the conversion's properties (`ad_consent`); null: unknown. */
  ad_consent: 'granted' | 'denied' | null;
  event_type: string;
  event_name: string | null;
  occurred_at: Date;
  /** occurred_at in microseconds as text: the exact keyset position. */
  sort_at: string;
  click_ids: Record<string, string>;
  status: string | null;
  sales_value: string | null;
  quote_value: string | null;
  currency: string | null;
  notes: string | null;
  lead_status_raw: string | null;
  lifecycle_stage_raw: string | null;
  is_spam: boolean;
  first_touch: AttributedTouchV1 | null;
  last_touch: AttributedTouchV1 | null;
  created_at: Date;
  updated_at: Date;
}

export interface HistoryRow {
  field: 'sales_value' | 'quote_value' | 'currency';
  old_value: number | string | null;
  new_value: number | string | null;
  reason: string;
  source: string;
  changed_at: Date;
}

export interface ListFilters {
  websiteId: string;
  from: Date | null;
  to: Date | null;
  type?: string | undefined;
  eventName?: string | undefined;
  status?: string | undefined;
  email?: string | undefined;
  includeSpam: boolean;
}

/** Keyset position: the last row's (occurred_at, id). */
export type Position = [sortAt: string, id: string];

export interface StoredReply {
  request_hash: string;
  status: number;
  response: unknown;
}

const SELECT_CONTACT = `SELECT c.id::text AS id, c.workspace_id, c.website_id, c.identity_id, c.email, c.phone, c.name, c.ad_consent,
  c.event_type, c.event_name, c.occurred_at,
  to_char(c.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sort_at,
  c.click_ids, c.status, c.sales_value::text AS sales_value, c.quote_value::text AS quote_value, c.currency, c.notes,
  c.lead_status_raw, c.lifecycle_stage_raw, c.is_spam, a.first_touch, a.last_touch, c.created_at, c.updated_at
  FROM contacts c LEFT JOIN contact_attribution a ON a.conversion_id = c.id`;

const IDEMPOTENCY_TTL = "interval '24 hours'";

function whereOf(filters: ListFilters, position: Position | null): { sql: string; params: unknown[] } {
  const params: unknown[] = [filters.websiteId];
  const conditions = ['c.website_id = $1'];
  const add = (condition: (n: string) => string, value: unknown): void => {
    params.push(value);
    conditions.push(condition(`$${params.length}`));
  };
  if (filters.from) add((n) => `c.occurred_at >= ${n}`, filters.from);
  if (filters.to) add((n) => `c.occurred_at < ${n}`, filters.to);
  if (filters.type !== undefined) add((n) => `c.event_type = ${n}`, filters.type);
  if (filters.eventName !== undefined) add((n) => `c.event_name = ${n}`, filters.eventName);
  if (filters.status !== undefined) add((n) => `c.status = ${n}`, filters.status);
  if (filters.email !== undefined) add((n) => `lower(c.email) = lower(${n})`, filters.email);
  if (!filters.includeSpam) conditions.push('NOT c.is_spam');
  if (position) {
    params.push(position[0], position[1]);
    conditions.push(`(c.occurred_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  return { sql: conditions.join(' AND '), params };
}

const numberOrNull = (value: string | null): number | null => (value === null ? null : Number(value));

export function outcomeOf(row: ContactRow): OutcomeFields {
  return {
    status: row.status,
    sales_value: numberOrNull(row.sales_value),
    quote_value: numberOrNull(row.quote_value),
    currency: row.currency,
    notes: row.notes,
    lead_status_raw: row.lead_status_raw,
    lifecycle_stage_raw: row.lifecycle_stage_raw,
    is_spam: row.is_spam,
  };
}

/** The display name a conversion carries in its properties, when it carries one. */
function nameFrom(properties: Record<string, unknown>): string | null {
  const text = (key: string): string | null => {
    const value = properties[key];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
  };
  const full = text('name') ?? [text('first_name'), text('last_name')].filter((p) => p !== null).join(' ');
  return full === '' ? null : full.slice(0, 200);
}

/** The contact's consent for ad personalisation, when the conversion's properties state it ("granted" / "denied"). */
function adConsentFrom(properties: Record<string, unknown>): 'granted' | 'denied' | null {
  const value = properties['ad_consent'];
  return value === 'granted' || value === 'denied' ? value : null;
}

function clickIdsFrom(properties: Record<string, unknown>): Record<string, string> {
  const raw = properties['click_ids'];
  if (typeof raw !== 'object' || raw === null) return {};
  return Object.fromEntries(Object.entries(raw).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export class ContactsRepo {
  constructor(private readonly sql: SqlStore) {}

  /** Files a conversion once (redeliveries change nothing); its recorded revenue opens the value history. */
  async insertConversion(conversion: ConversionCreatedV1, source: string): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      const identity = conversion.identity_id === null ? null : await this.survivingIdentity(tx, conversion.workspace_id, conversion.identity_id);
      const inserted = await tx.query(
        `INSERT INTO contacts (id, workspace_id, website_id, identity_id, anonymous_id, email, phone, name, event_type, event_name,
           occurred_at, click_ids, sales_value, currency, ad_consent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15)
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          conversion.conversion_id, conversion.workspace_id, conversion.website_id, identity, conversion.anonymous_id,
          conversion.email, conversion.phone, nameFrom(conversion.properties), conversion.event_type, conversion.event_name,
          new Date(conversion.occurred_at), JSON.stringify(clickIdsFrom(conversion.properties)), conversion.revenue, conversion.currency,
          adConsentFrom(conversion.properties),
        ],
      );
      if (inserted.rowCount === 0) return false;
      const opening: FieldChange[] = [];
      if (conversion.revenue !== null) opening.push({ field: 'sales_value', old_value: null, new_value: conversion.revenue });
      if (conversion.currency !== null) opening.push({ field: 'currency', old_value: null, new_value: conversion.currency });
      await this.insertHistory(tx, conversion.conversion_id, opening, 'recorded with the conversion', source);
      return true;
    });
  }

  private async survivingIdentity(tx: SqlExecutor, workspaceId: string, identityId: string): Promise<string> {
    let current = identityId;
    // Merges are kept compressed (every loser points at the final winner); the bound is a guard.
    for (let hop = 0; hop < 16; hop += 1) {
      const next = await tx.query<{ into_identity_id: string }>(
        'SELECT into_identity_id FROM identity_merges WHERE workspace_id = $1 AND from_identity_id = $2',
        [workspaceId, current],
      );
      const into = next.rows[0]?.into_identity_id;
      if (!into || into === current) return current;
      current = into;
    }
    return current;
  }

  async applyMerge(workspaceId: string, from: string, into: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO identity_merges (workspace_id, from_identity_id, into_identity_id) VALUES ($1, $2, $3)
         ON CONFLICT (workspace_id, from_identity_id) DO UPDATE SET into_identity_id = EXCLUDED.into_identity_id`,
        [workspaceId, from, into],
      );
      await tx.query('UPDATE identity_merges SET into_identity_id = $3 WHERE workspace_id = $1 AND into_identity_id = $2', [workspaceId, from, into]);
      await tx.query('UPDATE contacts SET identity_id = $3 WHERE workspace_id = $1 AND identity_id = $2', [workspaceId, from, into]);
    });
  }

  /**
   * Stores attribution's first and last touch. A journey only gains touches, so the computation
   * with the most touches is the latest: an older message delivered late changes nothing.
   */
  async upsertAttribution(conversionId: string, first: AttributedTouchV1 | null, last: AttributedTouchV1 | null, touchCount: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO contact_attribution (conversion_id, first_touch, last_touch, touch_count, updated_at) VALUES ($1, $2::jsonb, $3::jsonb, $4, now())
       ON CONFLICT (conversion_id) DO UPDATE SET first_touch = EXCLUDED.first_touch, last_touch = EXCLUDED.last_touch,
         touch_count = EXCLUDED.touch_count, updated_at = now()
       WHERE contact_attribution.touch_count <= EXCLUDED.touch_count`,
      [conversionId, first === null ? null : JSON.stringify(first), last === null ? null : JSON.stringify(last), touchCount],
    );
  }

  /** Up to `limit` rows after `position`, newest first. */
  async list(filters: ListFilters, position: Position | null, limit: number): Promise<ContactRow[]> {
    const where = whereOf(filters, position);
    const result = await this.sql.query<ContactRow>(
      `${SELECT_CONTACT} WHERE ${where.sql} ORDER BY c.occurred_at DESC, c.id DESC LIMIT $${where.params.length + 1}`,
      [...where.params, limit],
    );
    return result.rows;
  }

  async count(filters: ListFilters): Promise<number> {
    const where = whereOf(filters, null);
    const result = await this.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM contacts c WHERE ${where.sql}`, where.params);
    return result.rows[0]?.n ?? 0;
  }

  async get(websiteId: string, id: string, db: SqlExecutor = this.sql, forUpdate = false): Promise<ContactRow | null> {
    const result = await db.query<ContactRow>(
      `${SELECT_CONTACT} WHERE c.website_id = $1 AND c.id = $2::uuid${forUpdate ? ' FOR UPDATE OF c' : ''}`,
      [websiteId, id],
    );
    return result.rows[0] ?? null;
  }

  /**
   * Every row of the website whose email is one of `emails` (given lower-cased), locked for the
   * caller's transaction in id order, so writers that overlap take the locks in the same order.
   */
  async lockByEmails(tx: SqlExecutor, websiteId: string, emails: readonly string[]): Promise<ContactRow[]> {
    if (emails.length === 0) return [];
    const result = await tx.query<ContactRow>(
      `${SELECT_CONTACT} WHERE c.website_id = $1 AND lower(c.email) = ANY($2::text[]) ORDER BY c.id FOR UPDATE OF c`,
      [websiteId, [...emails]],
    );
    return result.rows;
  }

  async history(id: string, db: SqlExecutor = this.sql): Promise<HistoryRow[]> {
    const result = await db.query<HistoryRow>(
      'SELECT field, old_value, new_value, reason, source, changed_at FROM value_history WHERE contact_id = $1::uuid ORDER BY id',
      [id],
    );
    return result.rows;
  }

  async applyChanges(tx: SqlExecutor, id: string, changes: FieldChange[]): Promise<void> {
    if (changes.length === 0) return;
    // Column names come from the fixed list of writable fields, never from the request text.
    const sets = changes.map((change, index) => `${change.field} = $${index + 2}`);
    await tx.query(`UPDATE contacts SET ${sets.join(', ')}, updated_at = now() WHERE id = $1::uuid`, [id, ...changes.map((c) => c.new_value)]);
  }

  async insertHistory(tx: SqlExecutor, id: string, changes: FieldChange[], reason: string, source: string): Promise<void> {
    for (const change of changes) {
      if (change.field !== 'sales_value' && change.field !== 'quote_value' && change.field !== 'currency') continue;
      await tx.query(
        'INSERT INTO value_history (contact_id, field, old_value, new_value, reason, source) VALUES ($1::uuid, $2, $3::jsonb, $4::jsonb, $5, $6)',
        [id, change.field, JSON.stringify(change.old_value), JSON.stringify(change.new_value), reason, source],
      );
    }
  }

  /**
   * Serialises requests that share an idempotency key of one API key, then reads the stored reply
   * (if fresh). Records are per API key: another key's record is never found.
   */
  async lockIdempotencyKey(tx: SqlExecutor, workspaceId: string, apiKeyId: string, key: string): Promise<StoredReply | null> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`contacts.idempotency:${workspaceId}:${apiKeyId}:${key}`]);
    const result = await tx.query<StoredReply>(
      `SELECT request_hash, status, response FROM idempotency_keys
       WHERE workspace_id = $1 AND key_id = $2 AND key = $3 AND created_at > now() - ${IDEMPOTENCY_TTL}`,
      [workspaceId, apiKeyId, key],
    );
    return result.rows[0] ?? null;
  }

  async storeReply(tx: SqlExecutor, workspaceId: string, apiKeyId: string, key: string, reply: StoredReply): Promise<void> {
    await tx.query(
      `INSERT INTO idempotency_keys (workspace_id, key_id, key, request_hash, status, response, created_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, now())
       ON CONFLICT (workspace_id, key_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, response = EXCLUDED.response, created_at = now()`,
      [workspaceId, apiKeyId, key, reply.request_hash, reply.status, JSON.stringify(reply.response)],
    );
  }

  async deleteExpiredReplies(): Promise<void> {
    await this.sql.query(`DELETE FROM idempotency_keys WHERE created_at < now() - ${IDEMPOTENCY_TTL}`);
  }
}
