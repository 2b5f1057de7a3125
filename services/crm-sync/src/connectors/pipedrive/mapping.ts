// Pipedrive API v2 objects → provider-neutral records. How a pipeline's stages get buckets, how a
// deal's won/lost status becomes a stage, and how its changelog becomes a stage history, all live here.
import type { StageBucket } from '@sightline/proto-schemas';
import type { CrmCompany, CrmContact, CrmDeal, CrmPipeline, CrmStageChange } from '../../records';

/** v2 answers ids as integers; v1 (and some older payloads) as `{ value: id, ... }` objects. */
export type PdRef = number | { value?: number | null } | null | undefined;

export interface PdPipeline {
  id: number;
  name: string;
  order_nr: number;
  is_deleted?: boolean;
}

export interface PdStage {
  id: number;
  name: string;
  order_nr: number;
  pipeline_id: number;
  is_deleted?: boolean;
  deal_probability?: number | null;
}

export interface PdOrganization {
  id: number;
  name: string | null;
  add_time: string;
  update_time: string | null;
  is_deleted?: boolean;
}

export interface PdPerson {
  id: number;
  name?: string | null;
  org_id?: PdRef;
  emails?: { value: string; primary?: boolean; label?: string }[] | null;
  add_time: string;
  update_time: string | null;
  is_deleted?: boolean;
}

export type DealStatus = 'open' | 'won' | 'lost' | 'deleted';

export interface PdDeal {
  id: number;
  title: string | null;
  value: number | null;
  currency: string | null;
  pipeline_id: number | null;
  stage_id: number | null;
  person_id?: PdRef;
  org_id?: PdRef;
  status: DealStatus;
  add_time: string;
  update_time: string | null;
  stage_change_time?: string | null;
  won_time?: string | null;
  lost_time?: string | null;
  is_deleted?: boolean;
  custom_fields?: Record<string, unknown>;
}

/** One entry of GET /api/v1/deals/{id}/changelog. */
export interface PdChange {
  field_key: string;
  old_value: string | null;
  new_value: string | null;
  time: string;
}

/**
 * Pipedrive keeps won/lost as the deal's status, not as stages: a won deal stays in the stage it
 * was won from. The mirror reads a deal's bucket from its stage, so every pipeline gets two
 * stages of our own, `<pipeline id>:won` and `<pipeline id>:lost`, after its real (open) stages,
 * and a won or lost deal is placed in one of them.
 */
export const wonStageId = (pipelineId: string | number): string => `${pipelineId}:won`;
export const lostStageId = (pipelineId: string | number): string => `${pipelineId}:lost`;

export function refId(ref: PdRef): string | null {
  if (ref === null || ref === undefined) return null;
  if (typeof ref === 'number') return String(ref);
  return ref.value === null || ref.value === undefined ? null : String(ref.value);
}

/**
 * Pipedrive times: RFC 3339 in v2 ("2026-03-01T10:00:00Z"), "YYYY-MM-DD HH:MM:SS" in UTC in v1
 * (the changelog). Both become ISO 8601 with milliseconds; unreadable values are null.
 */
export function instant(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  const text = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(v) ? `${v.replace(' ', 'T')}Z` : v;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

const text = (value: string | null | undefined): string | null => (value === null || value === undefined || value.trim() === '' ? null : value.trim());

export function toPipeline(pipeline: PdPipeline, stages: PdStage[]): CrmPipeline {
  const open = stages
    .filter((s) => s.pipeline_id === pipeline.id && s.is_deleted !== true)
    .sort((a, b) => a.order_nr - b.order_nr || a.id - b.id);
  const bucketed: { id: string; name: string; bucket: StageBucket }[] = [
    ...open.map((s) => ({ id: String(s.id), name: s.name, bucket: 'open' as const })),
    { id: wonStageId(pipeline.id), name: 'Won', bucket: 'won' },
    { id: lostStageId(pipeline.id), name: 'Lost', bucket: 'lost' },
  ];
  return { id: String(pipeline.id), name: pipeline.name, stages: bucketed.map((s, position) => ({ ...s, position })) };
}

export function toCompany(o: PdOrganization): CrmCompany {
  const created = instant(o.add_time) ?? new Date(0).toISOString();
  return {
    crm_id: String(o.id),
    name: text(o.name) ?? `Organization ${o.id}`,
    // Pipedrive organizations have no standard domain field.
    domain: null,
    lifecycle_stage: null,
    created_at: created,
    updated_at: instant(o.update_time) ?? created,
  };
}

/** The primary email (else the first), lower-cased. */
export function primaryEmail(p: Pick<PdPerson, 'emails'>): string | null {
  const emails = (p.emails ?? []).filter((e) => text(e.value) !== null);
  const chosen = emails.find((e) => e.primary === true) ?? emails[0];
  return chosen ? chosen.value.trim().toLowerCase() : null;
}

export function toContact(p: PdPerson): CrmContact {
  return {
    crm_id: String(p.id),
    email: primaryEmail(p),
    lifecycle_stage: null,
    company_crm_id: refId(p.org_id),
    updated_at: instant(p.update_time) ?? instant(p.add_time) ?? new Date(0).toISOString(),
  };
}

/** The stage a deal counts as being in: its real stage while open, else its pipeline's won/lost stage. */
export function effectiveStage(status: string, stageId: string | null, pipelineId: string | null): string | null {
  if (pipelineId !== null && status === 'won') return wonStageId(pipelineId);
  if (pipelineId !== null && status === 'lost') return lostStageId(pipelineId);
  return stageId;
}

/** Whether the deal's changelog is worth reading: it moved stage or closed at least once. */
export function needsChangelog(d: PdDeal): boolean {
  return (d.stage_change_time !== null && d.stage_change_time !== undefined) || d.status === 'won' || d.status === 'lost';
}

/**
 * The deal's stage history, oldest first: the stage it was created in (at add_time), then each
 * stage move and each won/lost/reopen from its changelog. Without a changelog (the deal never
 * moved, or history reading is off) it is the creation stage plus, for a closed deal, its close.
 * `stagePipeline` maps a stage id to its pipeline (stage ids are unique across pipelines).
 */
export function stageHistory(d: PdDeal, changes: PdChange[] | null, stagePipeline: ReadonlyMap<string, string>): CrmStageChange[] {
  const created = instant(d.add_time) ?? new Date(0).toISOString();
  const currentStage = d.stage_id === null ? null : String(d.stage_id);
  const currentPipeline = d.pipeline_id === null ? null : String(d.pipeline_id);
  // The changelog lists newest first; equal times keep their reversed (oldest-first) order.
  const ordered = (changes ?? [])
    .map((c, i) => ({ c, at: instant(c.time), i }))
    .filter((x): x is { c: PdChange; at: string; i: number } => x.at !== null)
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || b.i - a.i);
  const firstOld = (key: string): string | null | undefined => ordered.find((x) => x.c.field_key === key)?.c.old_value;

  let stage = changes === null ? currentStage : (firstOld('stage_id') ?? currentStage);
  let pipeline = changes === null ? currentPipeline : (firstOld('pipeline_id') ?? (stage ? stagePipeline.get(stage) : undefined) ?? currentPipeline);
  let status = changes === null ? 'open' : (firstOld('status') ?? (ordered.some((x) => x.c.field_key === 'status') ? 'open' : d.status));
  const history: CrmStageChange[] = [];
  const record = (at: string): void => {
    const pipelineOf = (stage ? stagePipeline.get(stage) : undefined) ?? pipeline;
    const id = effectiveStage(status, stage, pipelineOf);
    if (id === null || history.at(-1)?.stage_id === id) return;
    history.push({ stage_id: id, pipeline_id: pipelineOf, at });
  };
  record(created);
  if (changes === null) {
    status = d.status;
    const closedAt = d.status === 'won' ? instant(d.won_time) : d.status === 'lost' ? instant(d.lost_time) : null;
    if (closedAt) record(closedAt);
    return history;
  }
  for (const { c, at } of ordered) {
    if (c.field_key === 'stage_id') stage = c.new_value;
    else if (c.field_key === 'pipeline_id') pipeline = c.new_value;
    else if (c.field_key === 'status') status = c.new_value ?? 'open';
    else continue;
    record(at);
  }
  return history;
}

export function toDeal(d: PdDeal, history: CrmStageChange[] | undefined): CrmDeal {
  const created = instant(d.add_time) ?? new Date(0).toISOString();
  const pipelineId = d.pipeline_id === null ? null : String(d.pipeline_id);
  const person = refId(d.person_id);
  const closedAt = d.status === 'won' ? instant(d.won_time) : d.status === 'lost' ? instant(d.lost_time) : null;
  return {
    crm_id: String(d.id),
    name: text(d.title) ?? `Deal ${d.id}`,
    amount: typeof d.value === 'number' && Number.isFinite(d.value) ? d.value : null,
    currency: text(d.currency)?.toUpperCase() ?? null,
    pipeline_id: pipelineId,
    stage_id: effectiveStage(d.status, d.stage_id === null ? null : String(d.stage_id), pipelineId),
    company_crm_id: refId(d.org_id),
    contact_crm_ids: person ? [person] : [],
    created_at: created,
    closed_at: closedAt,
    updated_at: instant(d.update_time) ?? created,
    ...(history ? { stage_history: history } : {}),
  };
}
