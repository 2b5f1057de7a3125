// Contacts (one row per conversion), their outcome write-back, and the three journeys.
import { JOURNEY_DAYS, LIMITS } from '../registry/limits';
import { operation } from './operation';
import { cursorParam, idempotencyKeyHeader, idParam, journeyDaysParam, limitParam, totalCountParam, windowParams } from './parameters';
import { listOf, one, ref } from './refs';
import type { ParameterObject, PathItemObject } from './types';

const text = (name: string, description: string): ParameterObject => ({
  name, in: 'query', description, schema: { type: 'string', minLength: 1, maxLength: 320 }, 'x-sightline-error-kind': 'invalid-request',
});

const journeyDescription = (who: string): string =>
  `Ordered timeline of sessions showing how ${who} arrived each time and what they did; devices are merged through the identity graph before ordering. Covers \`days\` days (default ${JOURNEY_DAYS.default}) back from the conversion (contact) or from now (company, deal).`;

export const contactPaths: Record<string, PathItemObject> = {
  '/contacts': {
    get: operation({
      operationId: 'listContacts', tag: 'Contacts', service: 'contacts', scope: 'conversions:read', website: true,
      summary: 'List contacts (one row per conversion)',
      description: 'One row per conversion, newest first; a person who converts twice appears twice (group by identity_id for people). Without pii:read, email, phone and name are masked (email domain kept) and meta.pii_note explains it. Window: from/to, or period, resolved exactly as every analytics read resolves them (the same phrase gives the same meta.window on every endpoint); windows up to 3,660 days (decided: the ledger is read over longer spans than analytics), longer is 400 window-too-large; with neither, every conversion (all time; meta.window.expression null). Paging is keyset on (occurred_at, id): rows inserted while a client pages are never skipped or repeated.',
      parameters: [
        ...windowParams,
        text('type', 'Only conversions of this type.'),
        text('event_name', 'Only conversions with this event name.'),
        text('status', 'Only contacts with this status.'),
        { ...text('email', 'Only contacts with this email (exact, case-insensitive). Needs pii:read: without it the request is 403 insufficient-scope naming pii:read.'), 'x-sightline-scope': 'pii:read' },
        { name: 'include_spam', in: 'query', description: 'Include contacts marked is_spam.', schema: { type: 'boolean', default: false }, 'x-sightline-error-kind': 'invalid-request' },
        cursorParam,
        limitParam(LIMITS.contacts, 'contacts'),
        totalCountParam,
      ],
      ok: { description: 'Contacts, meta and next_cursor.', schema: listOf(ref('Contact'), true) },
      errors: ['invalid-window', 'window-too-large'],
    }),
  },
  '/contacts/{id}': {
    get: operation({
      operationId: 'getContact', tag: 'Contacts', service: 'contacts', scope: 'conversions:read', website: true,
      summary: 'One contact with its deals and value history',
      description: 'The conversion, the deals its person is attached to, and every change of its value with the reason and the system that made it.',
      parameters: [idParam('contact', true)],
      ok: { description: 'The contact.', schema: one(ref('ContactDetail')) },
    }),
    patch: operation({
      operationId: 'patchContact', tag: 'Contacts', service: 'contacts', scope: 'conversions:write', website: true,
      summary: 'Update the outcome fields of a contact',
      description: 'Sets any of the writable outcome fields. A retry with the same Idempotency-Key returns the original result and writes nothing more; a request that changes nothing writes nothing (and emits no change). A write propagates to the connected CRM and to ad-platform conversion upload, and appears in the change feed with source api:<key_id>. Attribution and other computed fields are read-only: sending one is 400 invalid-request with the writable fields in `allowed` (decided; the spec leaves it open).',
      parameters: [idParam('contact', true), idempotencyKeyHeader('Strongly recommended.')],
      requestBody: { schema: ref('ContactPatch') },
      ok: { description: 'The updated or unchanged contact.', schema: one(ref('ContactDetail')) },
    }),
  },
  '/contacts/{id}/journey': {
    get: operation({
      operationId: 'getContactJourney', tag: 'Journeys', service: 'attribution', scope: 'conversions:read', website: true, analytics: true,
      summary: 'Journey of a contact',
      description: `${journeyDescription('the person')} When no raw events exist (imported contact, server-side conversion) the timeline is rebuilt from stored first and last touch and carries synthetic: true; it is not a complete history.`,
      parameters: [idParam('contact', true), journeyDaysParam(), limitParam(LIMITS.contact_journey, 'sessions')],
      ok: { description: 'The timeline.', schema: ref('JourneyResponse') },
      errors: ['window-too-large'],
    }),
  },
  '/companies/{id}/journey': {
    get: operation({
      operationId: 'getCompanyJourney', tag: 'Journeys', service: 'attribution', scope: 'deals:read', website: true, analytics: true,
      summary: 'Journey of everyone at a company',
      description: `${journeyDescription('everyone at the company')} people_count gives how many people were merged.`,
      parameters: [idParam('company', true), journeyDaysParam(), limitParam(LIMITS.contact_journey, 'sessions')],
      ok: { description: 'The timeline.', schema: ref('JourneyResponse') },
      errors: ['window-too-large'],
    }),
  },
  '/deals/{id}/journey': {
    get: operation({
      operationId: 'getDealJourney', tag: 'Journeys', service: 'attribution', scope: 'deals:read', website: true, analytics: true,
      summary: 'Journey of every contact on a deal',
      description: `${journeyDescription('every contact on the deal')} people_count gives how many people were merged.`,
      parameters: [idParam('deal', true), journeyDaysParam(), limitParam(LIMITS.contact_journey, 'sessions')],
      ok: { description: 'The timeline.', schema: ref('JourneyResponse') },
      errors: ['window-too-large'],
    }),
  },
};

export const eventPaths: Record<string, PathItemObject> = {
  '/events': {
    post: operation({
      operationId: 'postEvents', tag: 'Events', service: 'ingest', scope: 'events:write', website: true,
      summary: 'Send server-side events',
      description: 'Events are validated and classified by the same rules as the browser tracker, so server-side conversions attribute identically. anonymous_id stitches an event to earlier browsing; email gives a second way to resolve the person. Partial success: a malformed event is reported in `errors` and the rest are accepted, so read the counts rather than treating 200 as total success. 400 only when the request as a whole is invalid (not JSON, no events array, more than 200 events). An Idempotency-Key retry returns the original counts and records nothing twice. Accepted means stored: once this answers 200, the accepted events survive a restart or a crash of any part of Sightline. When Sightline is behind (the messages waiting for its consumers fill their bound) or the process is shutting down, the request is answered 503 service-unavailable with Retry-After within about a quarter of a second, and nothing of it is stored: send it again unchanged (same Idempotency-Key) after Retry-After. It is never held for seconds, and never accepted and then dropped.',
      parameters: [idempotencyKeyHeader('Optional.')],
      requestBody: { schema: ref('EventsRequest') },
      ok: { description: 'Counts of accepted and rejected events.', schema: ref('EventsResponse') },
    }),
  },
};
