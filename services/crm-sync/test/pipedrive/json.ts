// How stored records are answered: v2/v1 time formats, the API v2 JSON of each record type, and
// the v2 error body. Kept apart so every route renders the same shapes.
import { USER_ID, type StoredDeal, type StoredOrg, type StoredPerson, type StoredPipeline, type StoredStage } from './types';

// ---- JSON shapes (API v2) ----

/** RFC 3339 to the second, as v2 answers times. */
export function v2Time(ms: number | null): string | null {
  return ms === null ? null : new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** "YYYY-MM-DD HH:MM:SS" in UTC, as v1 answers times. */
export function v1Time(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export const pipelineJson = (p: StoredPipeline) => ({ id: p.id, name: p.name, order_nr: p.order_nr, is_deleted: p.is_deleted, is_deal_probability_enabled: p.is_deal_probability_enabled, add_time: v2Time(p.add), update_time: v2Time(p.update) });
export const stageJson = (s: StoredStage) => ({ id: s.id, order_nr: s.order_nr, name: s.name, is_deleted: s.is_deleted, deal_probability: s.deal_probability, pipeline_id: s.pipeline_id, is_deal_rot_enabled: false, days_to_rotten: null, add_time: v2Time(s.add), update_time: v2Time(s.update) });
export const orgJson = (o: StoredOrg) => ({ id: o.id, name: o.name, owner_id: o.owner_id, add_time: v2Time(o.add), update_time: v2Time(o.update), is_deleted: o.is_deleted, visible_to: 3, label_ids: [], address: null, custom_fields: { ...o.custom_fields } });
export const personJson = (p: StoredPerson) => ({
  id: p.id, name: p.name, first_name: p.name.split(' ')[0] ?? p.name, last_name: p.name.split(' ').slice(1).join(' ') || null, owner_id: p.owner_id, org_id: p.org_id,
  add_time: v2Time(p.add), update_time: v2Time(p.update), emails: p.emails.map((e) => ({ ...e })), phones: [], is_deleted: p.is_deleted, visible_to: 3, label_ids: [], picture_id: null,
  custom_fields: { ...p.custom_fields },
});
export const dealJson = (d: StoredDeal) => ({
  id: d.id, title: d.title, creator_user_id: USER_ID, owner_id: d.owner_id, value: d.value, person_id: d.person_id, org_id: d.org_id, stage_id: d.stage_id, pipeline_id: d.pipeline_id,
  currency: d.currency, archive_time: null, add_time: v2Time(d.add), update_time: v2Time(d.update), stage_change_time: v2Time(d.stage_change), status: d.status,
  is_archived: d.is_archived, is_deleted: d.status === 'deleted', probability: null, lost_reason: null, visible_to: 3, close_time: v2Time(d.close), won_time: v2Time(d.won),
  lost_time: v2Time(d.lost), expected_close_date: null, label_ids: [], origin: 'ManuallyCreated', origin_id: null, channel: null, channel_id: null, source_lead_id: null,
  arr: null, mrr: null, acv: null, custom_fields: { ...d.custom_fields },
});

export function errorBody(error: string, errorInfo: string): Record<string, unknown> {
  return { success: false, error, error_info: errorInfo, data: null, additional_data: null };
}
