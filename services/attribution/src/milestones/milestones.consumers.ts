// Milestones: CRM stages (milestone.reached from crm-sync) and lifecycle stages set on contacts
// (stage.changed from contacts, for status and lifecycle_stage_raw). The person is resolved when
// the milestone is stored: the identity given, else the contact's, else the newest conversion
// with the same email. Each stored milestone is then computed into the read model.
import { coalesce, groupToken, type ClickHouseStore, type ConsumerMap, type Envelope } from '@sightline/kit';
import { stageKey, type MilestoneReachedV1, type StageChangedV1 } from '@sightline/proto-schemas';
import type { ReadModel } from '../read-model/read-model';

interface MilestoneRow {
  milestone_id: string;
  website_id: string;
  workspace_id: string;
  stage: string;
  occurred_at: string;
  identity_id: string;
  conversion_id: string;
  email: string;
  deal_id: string;
  company_id: string;
  amount: number | null;
  currency: string;
}

export function milestonesConsumers(ch: ClickHouseStore, readModel: ReadModel): Pick<ConsumerMap<'attribution'>, 'milestone.reached' | 'stage.changed'> {
  const store = async (group: Envelope[], rows: MilestoneRow[]): Promise<void> => {
    if (rows.length === 0) return;
    await resolvePeople(ch, rows);
    const token = groupToken(group);
    await ch.insert('milestones', rows.map((r) => ({ ...r })), { dedupToken: token });
    await readModel.onOutcomes(rows.map((r) => ({
      website_id: r.website_id, workspace_id: r.workspace_id, kind: 'milestone', outcome_id: r.milestone_id, occurred_ms: Date.parse(r.occurred_at),
    })), `${token}:read-model`);
  };
  return {
    'milestone.reached': coalesce({
      handle: (group) => store(group, group.map((e) => fromReached(e.payload))),
    }),
    // A stage a CRM sync or import set on contacts is already a milestone of its own
    // (milestone.reached from crm-sync): only stages set through the API become milestones here.
    'stage.changed': coalesce({
      handle: (group) => store(group, group.filter((e) => !fromCrm(e.source)).flatMap((e) => fromStageChanged(e.payload))),
    }),
  };
}

const fromCrm = (source: string): boolean => source.startsWith('crm:') || source === 'import';

function fromReached(m: MilestoneReachedV1): MilestoneRow {
  return {
    milestone_id: m.milestone_id,
    website_id: m.website_id,
    workspace_id: m.workspace_id,
    stage: m.stage,
    occurred_at: m.occurred_at,
    identity_id: m.identity_id ?? '',
    conversion_id: m.conversion_id ?? '',
    email: (m.email ?? '').trim().toLowerCase(),
    deal_id: m.deal_id ?? '',
    company_id: m.company_id ?? '',
    amount: m.amount ?? null,
    currency: m.currency ?? '',
  };
}

/** A contact reaching a status or lifecycle stage is that stage's milestone, once per contact. */
function fromStageChanged(m: StageChangedV1): MilestoneRow[] {
  return m.changes
    .filter((c) => (c.field === 'status' || c.field === 'lifecycle_stage_raw') && typeof c.new_value === 'string' && stageKey(c.new_value) !== '')
    .map((c) => {
      const stage = stageKey(c.new_value as string);
      return {
        milestone_id: `contact:${m.conversion_id}:${stage}`,
        website_id: m.website_id,
        workspace_id: m.workspace_id,
        stage,
        occurred_at: m.changed_at,
        identity_id: m.identity_id ?? '',
        conversion_id: m.conversion_id,
        email: '',
        deal_id: '',
        company_id: '',
        amount: null,
        currency: '',
      };
    });
}

/** Fills identity_id from the contact or the email where the message did not carry one (one query). */
async function resolvePeople(ch: ClickHouseStore, rows: MilestoneRow[]): Promise<void> {
  const open = rows.filter((r) => r.identity_id === '' && (r.conversion_id !== '' || r.email !== ''));
  if (open.length === 0) return;
  const ids = [...new Set(open.map((r) => r.conversion_id).filter((id) => /^[0-9a-f-]{36}$/i.test(id)))];
  const emails = [...new Set(open.map((r) => r.email).filter((e) => e !== ''))];
  const found = await ch.query<{ conversion_id: string; email: string; identity_id: string }>(
    `SELECT toString(conversion_id) AS conversion_id, lower(email) AS email, identity_id
       FROM conversions
      WHERE website_id IN {websites:Array(UUID)} AND identity_id != ''
        AND (toString(conversion_id) IN {ids:Array(String)} OR lower(email) IN {emails:Array(String)})
      ORDER BY occurred_at DESC`,
    { websites: [...new Set(open.map((r) => r.website_id))], ids, emails },
  );
  const byConversion = new Map(found.map((f) => [f.conversion_id, f.identity_id]));
  const byEmail = new Map<string, string>();
  for (const f of found) if (f.email !== '' && !byEmail.has(f.email)) byEmail.set(f.email, f.identity_id);
  for (const r of open) r.identity_id = byConversion.get(r.conversion_id) ?? byEmail.get(r.email) ?? '';
}

