// The mirror's read SQL (Postgres and PGlite alike): is anything CRM there for a website, deals and
// companies keyset-paged newest update first, pipelines, and the lifecycle stages in use. Values
// always travel as bound parameters.
import type { SqlExecutor } from '@sightline/kit';
import type { StageBucket } from '@sightline/proto-schemas';
import type { CrmStage } from '../records';

/** Keyset position: the last row's (updated_at in microseconds as text, id). */
export type Position = [sortAt: string, id: string];

export interface DealRow {
  id: string;
  provider: string;
  crm_id: string;
  name: string;
  amount: number | null;
  currency: string | null;
  pipeline_id: string | null;
  pipeline_name: string | null;
  stage_id: string | null;
  stage_name: string | null;
  bucket: StageBucket;
  company_crm_id: string | null;
  contact_crm_ids: string[];
  /** Emails of the deal's CRM contacts that have one, sorted; for attribution only, never listed. */
  contact_emails: string[];
  created_at: Date;
  closed_at: Date | null;
  updated_at: Date;
  sort_at: string;
}

export interface DealFilters {
  websiteId: string;
  bucket?: StageBucket | undefined;
  updatedSince?: Date | undefined;
}

export interface CompanyRow {
  id: string;
  provider: string;
  crm_id: string;
  name: string;
  domain: string | null;
  lifecycle_stage: string | null;
  people_count: number;
  created_at: Date;
  updated_at: Date;
  sort_at: string;
}

export interface CompanyFilters {
  websiteId: string;
  /** Normalised: lower case, no scheme, path or leading www. */
  domain?: string | undefined;
}

export interface PipelineRow {
  provider: string;
  id: string;
  name: string;
  stages: CrmStage[];
}

const SORT_AT = (alias: string): string => `to_char(${alias}.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sort_at`;

/** Builds a WHERE clause with numbered parameters. */
class Conditions {
  readonly params: unknown[];
  private readonly parts: string[];

  constructor(first: string, value: unknown) {
    this.parts = [first];
    this.params = [value];
  }

  add(condition: (placeholder: (value: unknown) => string) => string): void {
    this.parts.push(condition((value) => {
      this.params.push(value);
      return `$${this.params.length}`;
    }));
  }

  get sql(): string {
    return this.parts.join(' AND ');
  }
}

function keyset(where: Conditions, alias: string, position: Position | null): void {
  if (position) where.add((p) => `(${alias}.updated_at, ${alias}.id) < (${p(position[0])}::timestamptz, ${p(position[1])}::uuid)`);
}

function dealWhere(filters: DealFilters, position: Position | null): Conditions {
  const where = new Conditions('d.website_id = $1', filters.websiteId);
  if (filters.bucket !== undefined) where.add((p) => `d.bucket = ${p(filters.bucket)}`);
  if (filters.updatedSince !== undefined) where.add((p) => `d.updated_at >= ${p(filters.updatedSince)}`);
  keyset(where, 'd', position);
  return where;
}

function companyWhere(filters: CompanyFilters, position: Position | null): Conditions {
  const where = new Conditions('c.website_id = $1', filters.websiteId);
  if (filters.domain !== undefined) where.add((p) => `regexp_replace(lower(c.domain), '^www\\.', '') = ${p(filters.domain)}`);
  keyset(where, 'c', position);
  return where;
}

export class ReadsRepo {
  constructor(private readonly sql: SqlExecutor) {}

  /** A website has CRM data when a CRM connection exists for it or any record was mirrored (an import). */
  async isConnected(websiteId: string): Promise<boolean> {
    const result = await this.sql.query<{ connected: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM connections WHERE website_id = $1)
           OR EXISTS (SELECT 1 FROM deals WHERE website_id = $1)
           OR EXISTS (SELECT 1 FROM companies WHERE website_id = $1)
           OR EXISTS (SELECT 1 FROM pipelines WHERE website_id = $1)
           OR EXISTS (SELECT 1 FROM crm_contacts WHERE website_id = $1) AS connected`,
      [websiteId],
    );
    return result.rows[0]?.connected === true;
  }

  /** Up to `limit` deals after `position`, most recently updated first. */
  async deals(filters: DealFilters, position: Position | null, limit: number): Promise<DealRow[]> {
    const where = dealWhere(filters, position);
    const result = await this.sql.query<DealRow>(
      `SELECT d.id::text AS id, d.provider, d.crm_id, d.name, d.amount, d.currency, d.pipeline_id, p.name AS pipeline_name,
              d.stage_id, d.stage_name, d.bucket, d.company_crm_id, d.contact_crm_ids,
              ARRAY(SELECT c.email FROM crm_contacts c
                     WHERE c.website_id = d.website_id AND c.provider = d.provider AND c.crm_id = ANY(d.contact_crm_ids) AND c.email IS NOT NULL
                     ORDER BY c.email) AS contact_emails,
              d.created_at, d.closed_at, d.updated_at, ${SORT_AT('d')}
         FROM deals d
         LEFT JOIN pipelines p ON p.website_id = d.website_id AND p.provider = d.provider AND p.id = d.pipeline_id
        WHERE ${where.sql}
        ORDER BY d.updated_at DESC, d.id DESC
        LIMIT $${where.params.length + 1}`,
      [...where.params, limit],
    );
    return result.rows;
  }

  async countDeals(filters: DealFilters): Promise<number> {
    const where = dealWhere(filters, null);
    const result = await this.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM deals d WHERE ${where.sql}`, where.params);
    return result.rows[0]?.n ?? 0;
  }

  /** Up to `limit` companies after `position`, most recently updated first, each with its CRM contact count. */
  async companies(filters: CompanyFilters, position: Position | null, limit: number): Promise<CompanyRow[]> {
    const where = companyWhere(filters, position);
    const result = await this.sql.query<CompanyRow>(
      `SELECT c.id::text AS id, c.provider, c.crm_id, c.name, c.domain, c.lifecycle_stage,
              (SELECT count(*)::int FROM crm_contacts m
                WHERE m.website_id = c.website_id AND m.provider = c.provider AND m.company_crm_id = c.crm_id) AS people_count,
              c.created_at, c.updated_at, ${SORT_AT('c')}
         FROM companies c
        WHERE ${where.sql}
        ORDER BY c.updated_at DESC, c.id DESC
        LIMIT $${where.params.length + 1}`,
      [...where.params, limit],
    );
    return result.rows;
  }

  async countCompanies(filters: CompanyFilters): Promise<number> {
    const where = companyWhere(filters, null);
    const result = await this.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM companies c WHERE ${where.sql}`, where.params);
    return result.rows[0]?.n ?? 0;
  }

  async pipelines(websiteId: string): Promise<PipelineRow[]> {
    const result = await this.sql.query<PipelineRow>(
      'SELECT provider, id, name, stages FROM pipelines WHERE website_id = $1 ORDER BY provider, name, id',
      [websiteId],
    );
    return result.rows;
  }

  /** Distinct lifecycle stages (as the CRM names them) on the website's CRM contacts. */
  async lifecycleStages(websiteId: string): Promise<string[]> {
    const result = await this.sql.query<{ stage: string }>(
      'SELECT DISTINCT lifecycle_stage AS stage FROM crm_contacts WHERE website_id = $1 AND lifecycle_stage IS NOT NULL',
      [websiteId],
    );
    return result.rows.map((r) => r.stage);
  }
}
