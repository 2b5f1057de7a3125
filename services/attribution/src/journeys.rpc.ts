// RPC answer for the contact journey (company and deal journeys: crm-journeys/). The gateway has already authenticated the key,
// resolved the website and validated the query against the OpenAPI document.
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import { contactJourney, type ContactJourneyDeps, type JourneyConversion, type JourneySession } from './contact-journey';

export interface JourneyQuery {
  days?: number;
  limit?: number;
}

export interface JourneyMeta {
  website_id: string;
  website: string;
  timezone: string;
  currency: string;
  window: { from: string; to: string; expression: null };
  row_count: number;
  truncated: boolean;
  definitions: Record<string, string>;
  note?: string;
}

/** JourneyResponse of the OpenAPI document, with the contact's ids and conversions beside it. */
export interface ContactJourneyBody {
  data: JourneySession[];
  synthetic: boolean;
  contact_id: string;
  identity_id: string | null;
  conversions: JourneyConversion[];
  meta: JourneyMeta;
}

const DEFINITIONS: Record<string, string> = {
  window: 'Sessions that started in the `days` before the contact\'s conversion, up to and including it; each session is shown whole.',
  identity_id: 'The person: every device and identity merged into it through the identity graph.',
  pageviews: 'Distinct pageview events in the session.',
  event_count: 'Distinct events in the session; `events` lists them in order (at most 1000, see events_truncated).',
  synthetic: 'True when no browsing history exists for the contact and the timeline was rebuilt from stored first and last touch.',
};

const SYNTHETIC_NOTE =
  'No browsing history exists for this contact (imported contact, or a server-side conversion without tracked visits). ' +
  'The timeline is rebuilt from the stored first and last touch, when any is known, and is not a complete history.';

function websiteOf(request: ApiRequest<JourneyQuery>): NonNullable<ApiRequest['website']> {
  // The gateway resolves a website for every journey operation; its absence is a wiring fault.
  if (!request.website) throw new Error(`${request.operation} needs a resolved website`);
  return request.website;
}

export function journeyRpcHandlers(deps: ContactJourneyDeps) {
  return {
    'attribution.getContactJourney': async (request: ApiRequest<JourneyQuery>): Promise<ApiResponse<ContactJourneyBody>> => {
      const website = websiteOf(request);
      const journey = await contactJourney(deps, {
        websiteId: website.id,
        contactId: String(request.params['id']),
        ...(request.query.days !== undefined ? { days: Number(request.query.days) } : {}),
        ...(request.query.limit !== undefined ? { limit: Number(request.query.limit) } : {}),
      });
      const meta: JourneyMeta = {
        website_id: website.id,
        website: website.domain,
        timezone: website.timezone,
        currency: website.currency,
        window: { ...journey.window, expression: null },
        row_count: journey.sessions.length,
        truncated: journey.truncated,
        definitions: DEFINITIONS,
        ...(journey.synthetic ? { note: SYNTHETIC_NOTE } : {}),
      };
      return {
        status: 200,
        body: {
          data: journey.sessions,
          synthetic: journey.synthetic,
          contact_id: journey.contact_id,
          identity_id: journey.identity_id,
          conversions: journey.conversions,
          meta,
        },
      };
    },
  };
}
