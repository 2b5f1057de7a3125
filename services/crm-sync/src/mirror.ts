// Applies CRM records (a pulled page or an imported chunk) to the mirror inside the caller's
// transaction, and records in the same transaction (outbox) the messages the changes imply:
//   deal.created / deal.stage_changed, milestone.reached (deal_created, deal_won, deal_lost, and
//   contact lifecycle stages), crm.members_synced for companies and deals whose people changed.
// Re-applying the same records changes nothing and publishes nothing, so a resumed or repeated
// sync, or a re-import, never duplicates a message. Each kind of record costs a fixed number of
// statements per call (read what exists, write everything), never a round trip per record.
import { createHash } from 'node:crypto';
import type { Outbox, OutboxMessage, SqlExecutor } from '@sightline/kit';
import { stageKey, type DealCreatedV1, type MessagePayloads, type PublishedBy, type StageBucket } from '@sightline/proto-schemas';
import type { CrmCompany, CrmContact, CrmDeal, CrmPipeline, CrmRecords, CrmStage, MirrorScope } from './records';

export interface ApplyResult {
  pipelines: number;
  companies: number;
  contacts: number;
  deals: number;
  messages: number;
}

/** A stable UUID from its parts (the same record always gets the same id). */
export function recordId(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u001f')).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const companyId = (scope: MirrorScope, crmId: string): string => recordId(scope.websiteId, scope.provider, 'company', crmId);
export const dealId = (scope: MirrorScope, crmId: string): string => recordId(scope.websiteId, scope.provider, 'deal', crmId);

export async function applyRecords(tx: SqlExecutor, outbox: Outbox<'crm-sync'>, scope: MirrorScope, records: CrmRecords): Promise<ApplyResult> {
  const messages: OutboxMessage<PublishedBy<'crm-sync'>>[] = [];
  const companiesToAnnounce = new Set<string>();
  await upsertPipelines(tx, scope, newest(records.pipelines ?? [], (p) => p.id, () => 0));
  for (const crmId of await upsertCompanies(tx, scope, newest(records.companies ?? [], (c) => c.crm_id, (c) => Date.parse(c.updated_at)))) companiesToAnnounce.add(crmId);
  await applyContacts(tx, scope, newest(records.contacts ?? [], (c) => c.crm_id, (c) => Date.parse(c.updated_at)), messages, companiesToAnnounce);
  const dealsToAnnounce = await applyDeals(tx, scope, newest(records.deals ?? [], (d) => d.crm_id, (d) => Date.parse(d.updated_at)), messages);
  messages.push(...(await membersMessages(tx, scope, 'company', [...companiesToAnnounce])));
  messages.push(...(await membersMessages(tx, scope, 'deal', dealsToAnnounce)));
  messages.push(...(await removeDeleted(tx, scope, records.deleted)));
  await outbox.addMany(tx, messages);
  return {
    pipelines: records.pipelines?.length ?? 0,
    companies: records.companies?.length ?? 0,
    contacts: records.contacts?.length ?? 0,
    deals: records.deals?.length ?? 0,
    messages: messages.length,
  };
}

/** One record per id: the newest copy (the later one on a tie), in first-seen order. */
function newest<T>(records: readonly T[], idOf: (r: T) => string, timeOf: (r: T) => number): T[] {
  const byId = new Map<string, T>();
  for (const r of records) {
    const seen = byId.get(idOf(r));
    if (!seen || timeOf(r) >= timeOf(seen)) byId.set(idOf(r), r);
  }
  return [...byId.values()];
}

function message<T extends PublishedBy<'crm-sync'>>(scope: MirrorScope, type: T, payload: MessagePayloads[T]): OutboxMessage<T> {
  return { type, workspace_id: scope.workspaceId, website_id: scope.websiteId, source: scope.source, payload } as OutboxMessage<T>;
}

const normalEmail = (email: string | null): string | null => email?.trim().toLowerCase() || null;

async function upsertPipelines(tx: SqlExecutor, scope: MirrorScope, pipelines: CrmPipeline[]): Promise<void> {
  if (pipelines.length === 0) return;
  await tx.query(
    `INSERT INTO pipelines (website_id, provider, id, name, stages, updated_at)
     SELECT $1, $2, p.id, p.name, p.stages, now() FROM jsonb_to_recordset($3::jsonb) AS p(id text, name text, stages jsonb)
     ON CONFLICT (website_id, provider, id) DO UPDATE SET name = EXCLUDED.name, stages = EXCLUDED.stages, updated_at = now()
     WHERE pipelines.name IS DISTINCT FROM EXCLUDED.name OR pipelines.stages IS DISTINCT FROM EXCLUDED.stages`,
    [scope.websiteId, scope.provider, JSON.stringify(pipelines.map((p) => ({ id: p.id, name: p.name, stages: p.stages })))],
  );
}

/** Upserts companies (an older copy never overwrites a newer one); returns the crm ids that are new. */
async function upsertCompanies(tx: SqlExecutor, scope: MirrorScope, companies: CrmCompany[]): Promise<string[]> {
  if (companies.length === 0) return [];
  const rows = companies.map((c) => ({ ...c, id: companyId(scope, c.crm_id) }));
  const result = await tx.query<{ crm_id: string; inserted: boolean }>(
    `INSERT INTO companies (id, workspace_id, website_id, provider, crm_id, name, domain, lifecycle_stage, created_at, updated_at)
     SELECT c.id, $1, $2, $3, c.crm_id, c.name, c.domain, c.lifecycle_stage, c.created_at, c.updated_at
       FROM jsonb_to_recordset($4::jsonb) AS c(id uuid, crm_id text, name text, domain text, lifecycle_stage text, created_at timestamptz, updated_at timestamptz)
     ON CONFLICT (website_id, provider, crm_id) DO UPDATE SET name = EXCLUDED.name, domain = EXCLUDED.domain,
       lifecycle_stage = EXCLUDED.lifecycle_stage, updated_at = EXCLUDED.updated_at
     WHERE companies.updated_at <= EXCLUDED.updated_at
     RETURNING crm_id, (xmax = 0) AS inserted`,
    [scope.workspaceId, scope.websiteId, scope.provider, JSON.stringify(rows)],
  );
  return result.rows.filter((r) => r.inserted).map((r) => r.crm_id);
}

interface StoredContact {
  crm_id: string;
  email: string | null;
  lifecycle_stage: string | null;
  company_crm_id: string | null;
  updated_at: Date;
}

async function applyContacts(tx: SqlExecutor, scope: MirrorScope, contacts: CrmContact[], messages: OutboxMessage<PublishedBy<'crm-sync'>>[], companies: Set<string>): Promise<void> {
  if (contacts.length === 0) return;
  const stored = await tx.query<StoredContact>(
    'SELECT crm_id, email, lifecycle_stage, company_crm_id, updated_at FROM crm_contacts WHERE website_id = $1 AND provider = $2 AND crm_id = ANY($3)',
    [scope.websiteId, scope.provider, contacts.map((c) => c.crm_id)],
  );
  const before = new Map(stored.rows.map((r) => [r.crm_id, r]));
  // An older copy than the stored one changes nothing.
  const fresh = contacts.filter((c) => {
    const old = before.get(c.crm_id);
    return !old || old.updated_at.getTime() <= Date.parse(c.updated_at);
  });
  if (fresh.length === 0) return;
  await tx.query(
    `INSERT INTO crm_contacts (website_id, provider, crm_id, email, lifecycle_stage, company_crm_id, updated_at)
     SELECT $1, $2, c.crm_id, c.email, c.lifecycle_stage, c.company_crm_id, c.updated_at
       FROM jsonb_to_recordset($3::jsonb) AS c(crm_id text, email text, lifecycle_stage text, company_crm_id text, updated_at timestamptz)
     ON CONFLICT (website_id, provider, crm_id) DO UPDATE SET email = EXCLUDED.email, lifecycle_stage = EXCLUDED.lifecycle_stage,
       company_crm_id = EXCLUDED.company_crm_id, updated_at = EXCLUDED.updated_at`,
    [scope.websiteId, scope.provider, JSON.stringify(fresh.map((c) => ({ ...c, email: normalEmail(c.email) })))],
  );
  for (const c of fresh) {
    const old = before.get(c.crm_id);
    const email = normalEmail(c.email);
    if (old?.company_crm_id !== c.company_crm_id || old?.email !== email) {
      if (old?.company_crm_id) companies.add(old.company_crm_id);
      if (c.company_crm_id) companies.add(c.company_crm_id);
    }
    if (c.lifecycle_stage && stageKey(c.lifecycle_stage) !== '' && old?.lifecycle_stage !== c.lifecycle_stage && email) {
      const stage = stageKey(c.lifecycle_stage);
      messages.push(message(scope, 'milestone.reached', {
        milestone_id: `${scope.provider}:contact:${c.crm_id}:${stage}`, website_id: scope.websiteId, workspace_id: scope.workspaceId,
        stage, occurred_at: c.updated_at, identity_id: null, conversion_id: null, email,
        deal_id: null, company_id: c.company_crm_id ? companyId(scope, c.company_crm_id) : null, amount: null, currency: null,
        stage_raw: c.lifecycle_stage, subject: 'contact',
      }));
    }
  }
}

/** The milestones a deal's bucket yields; a stage named like one of them is not sent twice. */
const DEAL_BUCKET_MILESTONES = new Set(['deal_created', 'deal_won', 'deal_lost']);

interface StoredDeal {
  crm_id: string;
  stage_id: string | null;
  bucket: StageBucket;
  contact_crm_ids: string[];
  updated_at: Date;
}

/** Stages of the website's pipelines, by pipeline id then stage id. */
async function stagesOf(tx: SqlExecutor, scope: MirrorScope, pipelineIds: string[]): Promise<Map<string, Map<string, CrmStage>>> {
  if (pipelineIds.length === 0) return new Map();
  const result = await tx.query<{ id: string; stages: CrmStage[] }>(
    'SELECT id, stages FROM pipelines WHERE website_id = $1 AND provider = $2 AND id = ANY($3)',
    [scope.websiteId, scope.provider, pipelineIds],
  );
  return new Map(result.rows.map((p) => [p.id, new Map(p.stages.map((s) => [s.id, s]))]));
}

/** Emails of CRM contacts by crm id (contacts without an email are absent). */
async function emailsOf(tx: SqlExecutor, scope: MirrorScope, crmIds: string[]): Promise<Map<string, string>> {
  if (crmIds.length === 0) return new Map();
  const result = await tx.query<{ crm_id: string; email: string }>(
    'SELECT crm_id, email FROM crm_contacts WHERE website_id = $1 AND provider = $2 AND crm_id = ANY($3) AND email IS NOT NULL',
    [scope.websiteId, scope.provider, crmIds],
  );
  return new Map(result.rows.map((r) => [r.crm_id, r.email]));
}

/** Applies deals; returns the crm ids of deals whose people changed (their member lists are announced). */
async function applyDeals(tx: SqlExecutor, scope: MirrorScope, deals: CrmDeal[], messages: OutboxMessage<PublishedBy<'crm-sync'>>[]): Promise<string[]> {
  if (deals.length === 0) return [];
  const stored = await tx.query<StoredDeal>(
    'SELECT crm_id, stage_id, bucket, contact_crm_ids, updated_at FROM deals WHERE website_id = $1 AND provider = $2 AND crm_id = ANY($3)',
    [scope.websiteId, scope.provider, deals.map((d) => d.crm_id)],
  );
  const before = new Map(stored.rows.map((r) => [r.crm_id, r]));
  const fresh = deals.filter((d) => {
    const old = before.get(d.crm_id);
    return !old || old.updated_at.getTime() <= Date.parse(d.updated_at);
  });
  if (fresh.length === 0) return [];
  const stages = await stagesOf(tx, scope, [...new Set(fresh.map((d) => d.pipeline_id).filter((id): id is string => id !== null))]);
  const rows = fresh.map((d) => {
    const stage = d.pipeline_id && d.stage_id ? stages.get(d.pipeline_id)?.get(d.stage_id) : undefined;
    return { deal: d, id: dealId(scope, d.crm_id), bucket: stage?.bucket ?? ('other' as StageBucket), stageName: stage?.name ?? null, contacts: [...new Set(d.contact_crm_ids)].sort() };
  });
  await tx.query(
    `INSERT INTO deals (id, workspace_id, website_id, provider, crm_id, name, amount, currency, pipeline_id, stage_id, stage_name, bucket,
                        company_crm_id, contact_crm_ids, created_at, closed_at, updated_at)
     SELECT d.id, $1, $2, $3, d.crm_id, d.name, d.amount, d.currency, d.pipeline_id, d.stage_id, d.stage_name, d.bucket,
            d.company_crm_id, d.contact_crm_ids, d.created_at, d.closed_at, d.updated_at
       FROM jsonb_to_recordset($4::jsonb) AS d(id uuid, crm_id text, name text, amount double precision, currency text, pipeline_id text,
            stage_id text, stage_name text, bucket text, company_crm_id text, contact_crm_ids text[], created_at timestamptz,
            closed_at timestamptz, updated_at timestamptz)
     ON CONFLICT (website_id, provider, crm_id) DO UPDATE SET name = EXCLUDED.name, amount = EXCLUDED.amount, currency = EXCLUDED.currency,
       pipeline_id = EXCLUDED.pipeline_id, stage_id = EXCLUDED.stage_id, stage_name = EXCLUDED.stage_name, bucket = EXCLUDED.bucket,
       company_crm_id = EXCLUDED.company_crm_id, contact_crm_ids = EXCLUDED.contact_crm_ids, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at`,
    [scope.workspaceId, scope.websiteId, scope.provider, JSON.stringify(rows.map((r) => ({
      ...r.deal, id: r.id, bucket: r.bucket, stage_name: r.stageName, contact_crm_ids: r.contacts,
    })))],
  );
  const emails = await emailsOf(tx, scope, [...new Set(rows.flatMap((r) => r.contacts))]);
  const membersChanged: string[] = [];
  for (const { deal: d, id, bucket, stageName, contacts } of rows) {
    const old = before.get(d.crm_id);
    const stageChanged = old !== undefined && old.stage_id !== d.stage_id;
    const contactsChanged = old === undefined || [...old.contact_crm_ids].sort().join(',') !== contacts.join(',');
    if (contactsChanged) membersChanged.push(d.crm_id);
    // Stages the CRM recorded entering (Salesforce OpportunityHistory, Pipedrive's flow), each a
    // milestone of its own at its own time: all of them for a deal seen first, then those after
    // the version the mirror held.
    const entered = (d.stage_history ?? []).filter((h) => !old || Date.parse(h.at) > old.updated_at.getTime());
    if (old && !stageChanged && entered.length === 0) continue;
    const dealEmails = contacts.map((c) => emails.get(c)).filter((e): e is string => e !== undefined).sort();
    const payload: DealCreatedV1 = {
      deal_id: id, crm_id: d.crm_id, provider: scope.provider, website_id: scope.websiteId, workspace_id: scope.workspaceId,
      name: d.name, amount: d.amount, currency: d.currency, pipeline_id: d.pipeline_id, stage_id: d.stage_id, stage_name: stageName, bucket,
      company_id: d.company_crm_id ? companyId(scope, d.company_crm_id) : null, contact_emails: dealEmails,
      occurred_at: old ? d.updated_at : d.created_at,
    };
    const milestone = (stage: string, at: string): OutboxMessage<'milestone.reached'> => message(scope, 'milestone.reached', {
      milestone_id: `${scope.provider}:deal:${d.crm_id}:${stage}`, website_id: scope.websiteId, workspace_id: scope.workspaceId, stage, occurred_at: at,
      identity_id: null, conversion_id: null, email: dealEmails[0] ?? null, deal_id: id, company_id: payload.company_id ?? null,
      amount: d.amount, currency: d.currency, contact_emails: dealEmails.slice(0, 500), subject: 'deal',
    });
    if (!old) {
      messages.push(message(scope, 'deal.created', payload));
      messages.push(milestone('deal_created', d.created_at));
    } else if (stageChanged) {
      messages.push(message(scope, 'deal.stage_changed', { ...payload, old_stage_id: old.stage_id, old_stage_name: null, old_bucket: old.bucket }));
    }
    for (const h of entered) {
      const key = stageKey(stages.get(h.pipeline_id ?? d.pipeline_id ?? '')?.get(h.stage_id)?.name ?? h.stage_id);
      // Named by stage (not deal_won / deal_lost, which stay the bucket milestones below).
      if (key !== '' && !DEAL_BUCKET_MILESTONES.has(key)) messages.push(milestone(key, h.at));
    }
    if ((!old || stageChanged) && (bucket === 'won' || bucket === 'lost')) messages.push(milestone(`deal_${bucket}`, d.closed_at ?? d.updated_at));
  }
  return membersChanged;
}

/**
 * Records the CRM deleted leave the mirror (so reads no longer list them). A deleted company or
 * deal is announced with no members, so copies of its people elsewhere (attribution's journeys)
 * empty too; a deleted contact leaves the member lists it was on at their next change.
 */
async function removeDeleted(tx: SqlExecutor, scope: MirrorScope, deleted: CrmRecords['deleted']): Promise<OutboxMessage<'crm.members_synced'>[]> {
  if (!deleted) return [];
  const remove = async (table: 'companies' | 'crm_contacts' | 'deals', ids: string[] | undefined): Promise<string[]> => {
    if (!ids || ids.length === 0) return [];
    const result = await tx.query<{ crm_id: string; name: string | null }>(
      `DELETE FROM ${table} WHERE website_id = $1 AND provider = $2 AND crm_id = ANY($3) RETURNING crm_id, ${table === 'crm_contacts' ? 'NULL::text' : 'name'} AS name`,
      [scope.websiteId, scope.provider, [...new Set(ids)]],
    );
    return result.rows.map((r) => r.crm_id);
  };
  await remove('crm_contacts', deleted.contacts);
  const syncedAt = new Date().toISOString();
  const emptied = (subject: 'company' | 'deal', crmId: string): OutboxMessage<'crm.members_synced'> => message(scope, 'crm.members_synced', {
    website_id: scope.websiteId, workspace_id: scope.workspaceId, subject,
    id: subject === 'company' ? companyId(scope, crmId) : dealId(scope, crmId), name: null, members: [], synced_at: syncedAt,
  });
  return [
    ...(await remove('companies', deleted.companies)).map((id) => emptied('company', id)),
    ...(await remove('deals', deleted.deals)).map((id) => emptied('deal', id)),
  ];
}

/** The full member lists of companies or deals as the mirror holds them now (one query per kind). */
async function membersMessages(tx: SqlExecutor, scope: MirrorScope, subject: 'company' | 'deal', crmIds: string[]): Promise<OutboxMessage<'crm.members_synced'>[]> {
  if (crmIds.length === 0) return [];
  const result = subject === 'company'
    ? await tx.query<{ crm_id: string; name: string | null; emails: string[] }>(
      `SELECT ids.crm_id, co.name, coalesce(array_agg(ct.email ORDER BY ct.email) FILTER (WHERE ct.email IS NOT NULL), '{}') AS emails
         FROM unnest($3::text[]) AS ids(crm_id)
         LEFT JOIN companies co ON co.website_id = $1 AND co.provider = $2 AND co.crm_id = ids.crm_id
         LEFT JOIN crm_contacts ct ON ct.website_id = $1 AND ct.provider = $2 AND ct.company_crm_id = ids.crm_id
        GROUP BY ids.crm_id, co.name`,
      [scope.websiteId, scope.provider, crmIds],
    )
    : await tx.query<{ crm_id: string; name: string | null; emails: string[] }>(
      // Deal by key, then each of its contact ids by key: primary-key lookups only. (Joining on
      // "crm_id = ANY(contact_crm_ids)" or on the website's columns compared every contact of the
      // website with every deal of the page: 6 s a page of 2,000 at 30,000 contacts.)
      `SELECT ids.crm_id, d.name, coalesce(array_agg(ct.email ORDER BY ct.email) FILTER (WHERE ct.email IS NOT NULL), '{}') AS emails
         FROM unnest($3::text[]) AS ids(crm_id)
         JOIN deals d ON d.website_id = $1 AND d.provider = $2 AND d.crm_id = ids.crm_id
         LEFT JOIN LATERAL unnest(d.contact_crm_ids) AS member(crm_id) ON true
         LEFT JOIN crm_contacts ct ON ct.website_id = $1 AND ct.provider = $2 AND ct.crm_id = member.crm_id
        GROUP BY ids.crm_id, d.name`,
      [scope.websiteId, scope.provider, crmIds],
    );
  const syncedAt = new Date().toISOString();
  return result.rows.map((r) => message(scope, 'crm.members_synced', {
    website_id: scope.websiteId, workspace_id: scope.workspaceId, subject,
    id: subject === 'company' ? companyId(scope, r.crm_id) : dealId(scope, r.crm_id), name: r.name,
    members: r.emails.map((email) => ({ email, conversion_id: null, identity_id: null })),
    synced_at: syncedAt,
  }));
}
