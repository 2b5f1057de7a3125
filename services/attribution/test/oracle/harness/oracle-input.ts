// The classified events as the oracle reads them: only the fields its rules name. ingest's
// identity_id and session attributes are dropped; its session id is kept only as a name.
import type { ClassifiedEventV1 } from '@sightline/proto-schemas';
import type { OracleEvent } from '../types';

export function oracleEventOf(e: ClassifiedEventV1): OracleEvent {
  return {
    event_id: e.event_id,
    origin: e.origin,
    event_type: e.event_type,
    event_name: e.event_name,
    occurred_at: e.occurred_at,
    anonymous_id: e.anonymous_id,
    email: e.email,
    phone: e.phone,
    revenue: e.revenue,
    url: e.url,
    page: e.page,
    channel: e.channel,
    source: e.source,
    medium: e.medium,
    campaign: e.campaign,
    term: e.term,
    content: e.content,
    click_ids: e.click_ids,
    ingest_session_id: e.session_id,
  };
}
