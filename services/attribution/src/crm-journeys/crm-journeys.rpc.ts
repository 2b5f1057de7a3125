// Company and deal journeys: the two RPC answers (GET /companies/{id}/journey, GET
// /deals/{id}/journey). The gateway has already authenticated the key, resolved the website and
// validated the query. Who is on each subject comes from crm-journeys.consumers.ts.
import { maskEmail, piiNote, PII_SCOPE, type ClickHouseStore } from '@sightline/kit';
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import type { ContactJourneyDeps } from '../contact-journey';
import type { JourneyMeta, JourneyQuery } from '../journeys.rpc';
import { crmJourney, type CrmJourney, type CrmJourneySession, type CrmJourneyPerson } from './crm-journey';
import { CrmMembersRepo, type CrmSubject } from './crm-members.repo';

const PII_NOTE = piiNote('Member emails');


/** JourneyResponse of the OpenAPI document, with the subject and its people beside it. */
export interface CrmJourneyBody {
  data: CrmJourneySession[];
  synthetic: boolean;
  company_id?: string;
  deal_id?: string;
  name: string | null;
  /** When crm-sync last listed the members (the list in force). */
  synced_at: string;
  people_count: number;
  members_total: number;
  members_unresolved: number;
  people: CrmJourneyPerson[];
  meta: JourneyMeta & { pii_included: boolean; pii_note?: string };
}

export function crmJourneyRpcHandlers(ch: ClickHouseStore, deps: ContactJourneyDeps) {
  const journeyDeps = { ...deps, members: new CrmMembersRepo(ch) };
  const answer = (subject: CrmSubject) => async (request: ApiRequest<JourneyQuery>): Promise<ApiResponse<CrmJourneyBody>> => {
    // The gateway resolves a website for every journey operation; its absence is a wiring fault.
    if (!request.website) throw new Error(`${request.operation} needs a resolved website`);
    const website = request.website;
    const journey = await crmJourney(journeyDeps, {
      websiteId: website.id,
      workspaceId: request.workspace.id,
      subject,
      subjectId: String(request.params['id']),
      ...(request.query.days !== undefined ? { days: Number(request.query.days) } : {}),
      ...(request.query.limit !== undefined ? { limit: Number(request.query.limit) } : {}),
    });
    const piiIncluded = request.key.scopes.includes(PII_SCOPE);
    const note = noteOf(journey);
    const meta: CrmJourneyBody['meta'] = {
      website_id: website.id,
      website: website.domain,
      timezone: website.timezone,
      currency: website.currency,
      window: { ...journey.window, expression: null },
      row_count: journey.sessions.length,
      truncated: journey.truncated,
      definitions: definitionsOf(subject),
      pii_included: piiIncluded,
      ...(piiIncluded ? {} : { pii_note: PII_NOTE }),
      ...(note ? { note } : {}),
    };
    const mask = (email: string): string => (piiIncluded ? email : maskEmail(email));
    return {
      status: 200,
      body: {
        data: journey.sessions.map((s) => ({ ...s, email: s.email === null ? null : mask(s.email) })),
        synthetic: journey.synthetic,
        ...(subject === 'company' ? { company_id: journey.subject_id } : { deal_id: journey.subject_id }),
        name: journey.name,
        synced_at: journey.synced_at,
        people_count: journey.people.length,
        members_total: journey.members_total,
        members_unresolved: journey.members_unresolved,
        people: journey.people.map((p) => ({ identity_id: p.identity_id, emails: p.emails.map(mask) })),
        meta,
      },
    };
  };
  return {
    'attribution.getCompanyJourney': answer('company'),
    'attribution.getDealJourney': answer('deal'),
  };
}

function definitionsOf(subject: CrmSubject): Record<string, string> {
  const who = subject === 'company' ? 'everyone the CRM lists at the company' : 'every contact the CRM lists on the deal';
  return {
    window: 'Sessions that started in the `days` before now; each session is shown whole. With more than `limit` sessions the newest are kept.',
    data: `Sessions of ${who}, oldest first, people interleaved in time order; identity_id says whose session it is and email is that person's member email when known.`,
    people_count: 'Distinct people among the members after merging devices and identities through the identity graph.',
    members_total: 'Members in the list the CRM last synced (each distinct member once).',
    members_unresolved: 'Members matched to no visitor by identity id, contact id or email (a contact without a tracked visitor counts here). They add no sessions.',
    pageviews: 'Distinct pageview events in the session.',
    event_count: 'Distinct events in the session; `events` lists them in order (at most 1000, see events_truncated).',
    synthetic: 'True when none of the people has browsing history and the timeline was rebuilt from the stored first and last touch of their conversions.',
  };
}

function noteOf(journey: CrmJourney): string | null {
  if (journey.empty_reason === 'no_members') return `The CRM's last sync lists nobody on this ${journey.subject}.`;
  if (journey.empty_reason === 'no_member_resolved') {
    return `None of the ${journey.members_total} members could be matched to a visitor by identity id, contact id or email, so there are no sessions to show.`;
  }
  if (journey.synthetic) {
    return 'No browsing history exists for any of these people. The timeline is rebuilt from the stored first and last touch of their conversions, when any is known, and is not a complete history.';
  }
  return null;
}

