// Applies CRM records (a pulled page or an imported chunk) to the mirror inside the caller's
// transaction, and records in the same transaction (outbox) the messages the changes imply:
//   deal.created / deal.stage_changed, milestone.reached (deal_created, deal_won, deal_lost, and
//   contact lifecycle stages), crm.members_synced for companies and deals whose people changed.
// Re-applying the same records changes nothing and publishes nothing, so a resumed or repeated
// sync, or a re-import, never duplicates a message.
import { createHash } from 'node:crypto';
import type { Outbox, OutboxMessage, SqlExecutor } from '@sightline/kit';
import { stageKey, type CrmMembersSyncedV1, type DealCreatedV1, type MilestoneReachedV1, type StageBucket } from '@sightline/proto-schemas';
import type { CrmCompany, CrmContact, CrmDeal, CrmPipeline, CrmRecords, MirrorScope } from './records';

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

interface DealRow {
  crm_id: string;
  stage_id: string | null;
  bucket: StageBucket;
  contact_crm_ids: string[];
}

export async function applyRecords(tx: SqlExecutor, outbox: Outbox, scope: MirrorScope, records: CrmRecords): Promise<ApplyResult> {
  const messages: OutboxMessage[] = [];
  const companiesToAnnounce = new Set<string>();
  for (const p of records.pipelines ?? []) await upsertPipeline(tx, scope, p);
  for (const c of records.companies ?? []) {
    if (await upsertCompany(tx, scope, c)) companiesToAnnounce.add(c.crm_id);
  }
  for (const c of records.contacts ?? []) await applyContact(tx, scope, c, messages, companiesToAnnounce);
  for (const d of records.deals ?? []) await applyDeal(tx, scope, d, messages);
  for (const crmId of companiesToAnnounce) messages.push(await membersMessage(tx, scope, 'company', crmId));
  for (const m of messages) await outbox.add(tx, m);
  return {
    pipelines: records.pipelines?.length ?? 0,
    companies: records.companies?.length ?? 0,
    contacts: records.contacts?.length ?? 0,
    deals: records.deals?.length ?? 0,
    messages: messages.length,
  };
}

function message<P>(scope: MirrorScope, type: OutboxMessage['type'], payload: P): OutboxMessage<P> {
  return { type, workspace_id: scope.workspaceId, website_id: scope.websiteId, source: scope.source, payload };
}

async function upsertPipeline(tx: SqlExecutor, scope: MirrorScope, p: CrmPipeline): Promise<void> {
  await tx.query(
    `INSERT INTO pipelines (website_id, provider, id, name, stages, updated_at) VALUES ($1, $2, $3, $4, $5, now())
     ON CONFLICT (website_id, provider, id) DO UPDATE SET name = EXCLUDED.name, stages = EXCLUDED.stages, updated_at = now()
     WHERE pipelines.name IS DISTINCT FROM EXCLUDED.name OR pipelines.stages IS DISTINCT FROM EXCLUDED.stages`,
    [scope.websiteId, scope.provider, p.id, p.name, JSON.stringify(p.stages)],
  );
}

/** True when the company is new (its membership is announced, possibly empty). */
async function upsertCompany(tx: SqlExecutor, scope: MirrorScope, c: CrmCompany): Promise<boolean> {
  const result = await tx.query<{ inserted: boolean }>(
    `INSERT INTO companies (id, workspace_id, website_id, provider, crm_id, name, domain, lifecycle_stage, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (website_id, provider, crm_id) DO UPDATE SET name = EXCLUDED.name, domain = EXCLUDED.domain,
       lifecycle_stage = EXCLUDED.lifecycle_stage, updated_at = EXCLUDED.updated_at
     WHERE companies.updated_at <= EXCLUDED.updated_at
     RETURNING (xmax = 0) AS inserted`,
    [companyId(scope, c.crm_id), scope.workspaceId, scope.websiteId, scope.provider, c.crm_id, c.name, c.domain, c.lifecycle_stage, c.created_at, c.updated_at],
  );
  return result.rows[0]?.inserted === true;
}

async function applyContact(tx: SqlExecutor, scope: MirrorScope, c: CrmContact, messages: OutboxMessage[], companies: Set<string>): Promise<void> {
  const before = await tx.query<{ email: string | null; lifecycle_stage: string | null; company_crm_id: string | null; updated_at: Date }>(
    'SELECT email, lifecycle_stage, company_crm_id, updated_at FROM crm_contacts WHERE website_id = $1 AND provider = $2 AND crm_id = $3',
    [scope.websiteId, scope.provider, c.crm_id],
  );
  const old = before.rows[0];
  if (old && old.updated_at.getTime() > Date.parse(c.updated_at)) return; // an older copy: keep the newer one
  await tx.query(
    `INSERT INTO crm_contacts (website_id, provider, crm_id, email, lifecycle_stage, company_crm_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (website_id, provider, crm_id) DO UPDATE SET email = EXCLUDED.email, lifecycle_stage = EXCLUDED.lifecycle_stage,
       company_crm_id = EXCLUDED.company_crm_id, updated_at = EXCLUDED.updated_at`,
    [scope.websiteId, scope.provider, c.crm_id, c.email?.trim().toLowerCase() || null, c.lifecycle_stage, c.company_crm_id, c.updated_at],
  );
  const email = c.email?.trim().toLowerCase() || null;
  if (old?.company_crm_id !== c.company_crm_id || old?.email !== email) {
    if (old?.company_crm_id) companies.add(old.company_crm_id);
    if (c.company_crm_id) companies.add(c.company_crm_id);
  }
  if (c.lifecycle_stage && stageKey(c.lifecycle_stage) !== '' && old?.lifecycle_stage !== c.lifecycle_stage && email) {
    const stage = stageKey(c.lifecycle_stage);
    messages.push(message<MilestoneReachedV1>(scope, 'milestone.reached', {
      milestone_id: `${scope.provider}:contact:${c.crm_id}:${stage}`, website_id: scope.websiteId, workspace_id: scope.workspaceId,
      stage, occurred_at: c.updated_at, identity_id: null, conversion_id: null, email,
      deal_id: null, company_id: c.company_crm_id ? companyId(scope, c.company_crm_id) : null, amount: null, currency: null,
    }));
  }
}

async function bucketOf(tx: SqlExecutor, scope: MirrorScope, d: CrmDeal): Promise<{ bucket: StageBucket; stageName: string | null }> {
  if (!d.pipeline_id || !d.stage_id) return { bucket: 'other', stageName: null };
  const result = await tx.query<{ stages: { id: string; name: string; bucket: StageBucket }[] }>(
    'SELECT stages FROM pipelines WHERE website_id = $1 AND provider = $2 AND id = $3',
    [scope.websiteId, scope.provider, d.pipeline_id],
  );
  const stage = result.rows[0]?.stages.find((s) => s.id === d.stage_id);
  return stage ? { bucket: stage.bucket, stageName: stage.name } : { bucket: 'other', stageName: null };
}

async function applyDeal(tx: SqlExecutor, scope: MirrorScope, d: CrmDeal, messages: OutboxMessage[]): Promise<void> {
  const before = await tx.query<DealRow & { updated_at: Date }>(
    'SELECT crm_id, stage_id, bucket, contact_crm_ids, updated_at FROM deals WHERE website_id = $1 AND provider = $2 AND crm_id = $3',
    [scope.websiteId, scope.provider, d.crm_id],
  );
  const old = before.rows[0];
  if (old && old.updated_at.getTime() > Date.parse(d.updated_at)) return; // an older copy
  const { bucket, stageName } = await bucketOf(tx, scope, d);
  const contacts = [...new Set(d.contact_crm_ids)].sort();
  await tx.query(
    `INSERT INTO deals (id, workspace_id, website_id, provider, crm_id, name, amount, currency, pipeline_id, stage_id, stage_name, bucket,
                        company_crm_id, contact_crm_ids, created_at, closed_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     ON CONFLICT (website_id, provider, crm_id) DO UPDATE SET name = EXCLUDED.name, amount = EXCLUDED.amount, currency = EXCLUDED.currency,
       pipeline_id = EXCLUDED.pipeline_id, stage_id = EXCLUDED.stage_id, stage_name = EXCLUDED.stage_name, bucket = EXCLUDED.bucket,
       company_crm_id = EXCLUDED.company_crm_id, contact_crm_ids = EXCLUDED.contact_crm_ids, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at`,
    [dealId(scope, d.crm_id), scope.workspaceId, scope.websiteId, scope.provider, d.crm_id, d.name, d.amount, d.currency, d.pipeline_id, d.stage_id,
      stageName, bucket, d.company_crm_id, contacts, d.created_at, d.closed_at, d.updated_at],
  );
  const stageChanged = old !== undefined && old.stage_id !== d.stage_id;
  const contactsChanged = old === undefined || [...old.contact_crm_ids].sort().join(',') !== contacts.join(',');
  if (old && !stageChanged && !contactsChanged) return;
  const emails = await contactEmails(tx, scope, contacts);
  const payload: DealCreatedV1 = {
    deal_id: dealId(scope, d.crm_id), crm_id: d.crm_id, provider: scope.provider, website_id: scope.websiteId, workspace_id: scope.workspaceId,
    name: d.name, amount: d.amount, currency: d.currency, pipeline_id: d.pipeline_id, stage_id: d.stage_id, stage_name: stageName, bucket,
    company_id: d.company_crm_id ? companyId(scope, d.company_crm_id) : null, contact_emails: emails,
    occurred_at: old ? d.updated_at : d.created_at,
  };
  const milestone = (stage: string, at: string): OutboxMessage<MilestoneReachedV1> => message(scope, 'milestone.reached', {
    milestone_id: `${scope.provider}:deal:${d.crm_id}:${stage}`, website_id: scope.websiteId, workspace_id: scope.workspaceId, stage, occurred_at: at,
    identity_id: null, conversion_id: null, email: emails[0] ?? null, deal_id: payload.deal_id, company_id: payload.company_id ?? null,
    amount: d.amount, currency: d.currency,
  });
  if (!old) {
    messages.push(message(scope, 'deal.created', payload));
    messages.push(milestone('deal_created', d.created_at));
  } else if (stageChanged) {
    messages.push(message(scope, 'deal.stage_changed', { ...payload, old_stage_id: old.stage_id, old_stage_name: null, old_bucket: old.bucket }));
  }
  if ((!old || stageChanged) && (bucket === 'won' || bucket === 'lost')) messages.push(milestone(`deal_${bucket}`, d.closed_at ?? d.updated_at));
  if (contactsChanged) messages.push(await membersMessage(tx, scope, 'deal', d.crm_id));
}

async function contactEmails(tx: SqlExecutor, scope: MirrorScope, crmIds: readonly string[]): Promise<string[]> {
  if (crmIds.length === 0) return [];
  const result = await tx.query<{ email: string }>(
    'SELECT email FROM crm_contacts WHERE website_id = $1 AND provider = $2 AND crm_id = ANY($3) AND email IS NOT NULL ORDER BY email',
    [scope.websiteId, scope.provider, crmIds],
  );
  return result.rows.map((r) => r.email);
}

/** The full member list of a company or deal as the mirror holds it now. */
async function membersMessage(tx: SqlExecutor, scope: MirrorScope, subject: 'company' | 'deal', crmId: string): Promise<OutboxMessage<CrmMembersSyncedV1>> {
  let emails: string[];
  let name: string | null = null;
  if (subject === 'company') {
    const members = await tx.query<{ email: string }>(
      'SELECT email FROM crm_contacts WHERE website_id = $1 AND provider = $2 AND company_crm_id = $3 AND email IS NOT NULL ORDER BY email',
      [scope.websiteId, scope.provider, crmId],
    );
    emails = members.rows.map((r) => r.email);
    name = (await tx.query<{ name: string }>('SELECT name FROM companies WHERE website_id = $1 AND provider = $2 AND crm_id = $3', [scope.websiteId, scope.provider, crmId])).rows[0]?.name ?? null;
  } else {
    const deal = await tx.query<{ name: string; contact_crm_ids: string[] }>(
      'SELECT name, contact_crm_ids FROM deals WHERE website_id = $1 AND provider = $2 AND crm_id = $3', [scope.websiteId, scope.provider, crmId],
    );
    name = deal.rows[0]?.name ?? null;
    emails = await contactEmails(tx, scope, deal.rows[0]?.contact_crm_ids ?? []);
  }
  return message<CrmMembersSyncedV1>(scope, 'crm.members_synced', {
    website_id: scope.websiteId, workspace_id: scope.workspaceId, subject,
    id: subject === 'company' ? companyId(scope, crmId) : dealId(scope, crmId), name,
    members: emails.map((email) => ({ email, conversion_id: null, identity_id: null })),
    synced_at: new Date().toISOString(),
  });
}
