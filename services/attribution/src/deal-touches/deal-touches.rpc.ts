// attribution.getDealTouches (internal; crm-sync calls it once per page of GET /deals). A deal's
// people are found through its CRM contacts' emails: the conversions with those emails give
// identities, identity_roots gives every id of each person. first_touch / last_touch are the
// earliest and the latest of those people's sessions that started at or before the deal was
// created. People without browsing history fall back to the touches stored with their imported
// contacts. contact_ids are the matching conversions (Sightline contacts), newest first.
import type { ClickHouseStore, RpcHandlerOf } from '@sightline/kit';
import type { DealTouch, DealTouchBasis, DealTouchesRequest, DealTouchesResponse } from '@sightline/proto-schemas';
import { contactsByEmail, personIds, sessionTouches, type DealIdentity, type EmailContact } from './deal-touches.sql';

/** Contact ids listed per deal (the response schema's maxItems). */
export const MAX_CONTACT_IDS = 100;

type DealAnswer = DealTouchesResponse['deals'][number];

export function dealTouchesRpcHandlers(ch: ClickHouseStore): { 'attribution.getDealTouches': RpcHandlerOf<'attribution.getDealTouches'> } {
  return { 'attribution.getDealTouches': (request) => dealTouches(ch, request) };
}

const normalEmail = (email: string): string => email.trim().toLowerCase();

export async function dealTouches(ch: ClickHouseStore, request: DealTouchesRequest): Promise<DealTouchesResponse> {
  const deals = request.deals.map((d) => ({
    id: d.deal_id,
    emails: [...new Set(d.emails.map(normalEmail).filter((e) => e !== ''))],
    cutoffMs: Date.parse(d.created_at),
  }));
  const contacts = await contactsByEmail(ch, request.website_id, [...new Set(deals.flatMap((d) => d.emails))]);
  const byEmail = new Map<string, EmailContact[]>();
  for (const c of contacts) byEmail.set(c.email, [...(byEmail.get(c.email) ?? []), c]);

  const contactsOf = new Map(deals.map((d) => [d.id, newestFirst(d.emails.flatMap((e) => byEmail.get(e) ?? []))]));
  const identities = [...new Set(contacts.map((c) => c.identity_id).filter((id) => id !== ''))];
  const idsOfPerson = await personIds(ch, request.workspace_id, identities);

  const pairs: DealIdentity[] = deals.flatMap((d) => {
    const ids = new Set((contactsOf.get(d.id) ?? []).flatMap((c) => (c.identity_id === '' ? [] : idsOfPerson.get(c.identity_id) ?? [c.identity_id])));
    return [...ids].map((identityId) => ({ dealId: d.id, identityId, cutoffMs: d.cutoffMs }));
  });
  const fromSessions = await sessionTouches(ch, request.website_id, pairs);

  return {
    deals: deals.map((d): DealAnswer => {
      const matched = contactsOf.get(d.id) ?? [];
      const contactIds = matched.slice(0, MAX_CONTACT_IDS).map((c) => c.conversion_id);
      const answer = (basis: DealTouchBasis, first: DealTouch | null = null, last: DealTouch | null = null): DealAnswer => ({
        deal_id: d.id, first_touch: first, last_touch: last, contact_ids: contactIds, basis,
      });
      if (d.emails.length === 0) return answer('no_contacts');
      if (matched.length === 0) return answer('no_matching_contact');
      const sessions = fromSessions.get(d.id);
      if (sessions) return answer('sessions', sessions.first, sessions.last);
      const stored = storedTouches(matched, d.cutoffMs);
      return stored ? answer('stored_touches', stored.first, stored.last) : answer('no_touch_before_deal');
    }),
  };
}

/** Distinct conversions, newest first (ties by id, descending, as the query orders them). */
function newestFirst(list: readonly EmailContact[]): EmailContact[] {
  const unique = [...new Map(list.map((c) => [c.conversion_id, c])).values()];
  return unique.sort((a, b) => (a.occurred_at === b.occurred_at ? (a.conversion_id < b.conversion_id ? 1 : -1) : a.occurred_at < b.occurred_at ? 1 : -1));
}

/** The earliest stored first touch and the latest stored last touch at or before the cutoff. */
function storedTouches(contacts: readonly EmailContact[], cutoffMs: number): { first: DealTouch; last: DealTouch } | null {
  const before = (t: DealTouch | null): t is DealTouch => t !== null && Date.parse(t.occurred_at) <= cutoffMs;
  const firsts = contacts.map((c) => c.stored_first).filter(before);
  const lasts = contacts.map((c) => c.stored_last).filter(before);
  const candidates = [...firsts, ...lasts];
  if (candidates.length === 0) return null;
  const byTime = (a: DealTouch, b: DealTouch): number => Date.parse(a.occurred_at) - Date.parse(b.occurred_at);
  const first = [...(firsts.length > 0 ? firsts : candidates)].sort(byTime)[0] as DealTouch;
  const last = [...(lasts.length > 0 ? lasts : candidates)].sort(byTime).at(-1) as DealTouch;
  return { first, last };
}
