// CRM mirrors (crm-sync) and the change feed (changefeed).
import { CHANGE_RETENTION_DAYS, CHANGES_DEFAULT_LOOKBACK_HOURS, LIMITS } from '../registry/limits';
import { CHANGE_TYPES, STAGE_BUCKETS } from '../registry/vocabulary';
import { operation } from './operation';
import { cursorParam, limitParam, listParam, totalCountParam } from './parameters';
import { enumOf, listOf, ref } from './refs';
import type { PathItemObject } from './types';

const NO_CRM = 'With no CRM connected for the website (no connection, and no deals, companies or contacts imported) the answer is 409 crm-not-connected (decided: the spec asks for a connection-required error, not an empty list), whose remediation says to connect a CRM in the app or import deals with `sightline import deals`; an import counts as a connection.';

const DEAL_ATTRIBUTION = 'first_touch and last_touch are the earliest and the latest session, at or before the deal was created, of the people whose email is on one of the deal\'s CRM contacts (every device of a person, through the identity graph); for people with no browsing history they come from the touches stored with their imported contacts (attribution_basis says which, or why there are none). If attribution cannot be reached, the list is still answered: first_touch, last_touch, contact_ids and attribution_basis are null and meta.note says so.';

export const crmPaths: Record<string, PathItemObject> = {
  '/deals': {
    get: operation({
      operationId: 'listDeals', tag: 'CRM', service: 'crm-sync', scope: 'deals:read', website: true,
      summary: 'Deals mirrored from the CRM',
      description: `Deals with computed first-touch and last-touch attribution, most recently updated first (ties by id), paged with an opaque cursor. Every row has stage.normalized_bucket (open, won, lost, other); stage names are customer-chosen, so rely on the bucket. ${DEAL_ATTRIBUTION} ${NO_CRM}`,
      parameters: [
        { name: 'stage_bucket', in: 'query', description: 'Only deals whose stage is in this bucket.', schema: enumOf(STAGE_BUCKETS), 'x-sightline-error-kind': 'invalid-request' },
        { name: 'updated_since', in: 'query', description: 'Only deals updated (in the CRM) at or after this time.', schema: { type: 'string', format: 'date-time' }, 'x-sightline-error-kind': 'invalid-request' },
        cursorParam,
        limitParam(LIMITS.deals, 'deals'),
        totalCountParam,
      ],
      ok: { description: 'Deals, meta and next_cursor.', schema: ref('DealsResponse') },
      errors: ['crm-not-connected'],
    }),
  },
  '/pipelines': {
    get: operation({
      operationId: 'listPipelines', tag: 'CRM', service: 'crm-sync', scope: 'deals:read', website: true,
      summary: 'Pipelines and their stage vocabulary',
      description: `Each pipeline with its stages in order and each stage's normalized bucket. meta.stage_vocabulary lists the stage keys this CRM data gives to the stages parameter of /metrics and /paths: deal_created, deal_won, deal_lost, and every contact lifecycle stage in use, keyed as stages= expects ("Marketing Qualified Lead" → marketing_qualified_lead). Stages set on contacts through the API (status, lifecycle_stage_raw) are also accepted there without appearing here. ${NO_CRM}`,
      ok: { description: 'Pipelines, and meta.stage_vocabulary.', schema: ref('PipelinesResponse') },
      errors: ['crm-not-connected'],
    }),
  },
  '/companies': {
    get: operation({
      operationId: 'listCompanies', tag: 'CRM', service: 'crm-sync', scope: 'deals:read', website: true,
      summary: 'Companies mirrored from the CRM',
      description: `Companies (accounts), most recently updated first (ties by id), paged with an opaque cursor. people_count is the number of CRM contacts of the company in the mirror. /accounts answers identically. ${NO_CRM}`,
      parameters: [
        { name: 'domain', in: 'query', description: 'Only companies with this domain (case-insensitive; a leading www. is ignored on both sides).', schema: { type: 'string', minLength: 1, maxLength: 253 }, 'x-sightline-error-kind': 'invalid-request' },
        cursorParam,
        limitParam(LIMITS.companies, 'companies'),
        totalCountParam,
      ],
      ok: { description: 'Companies, meta and next_cursor.', schema: listOf(ref('Company'), true) },
      errors: ['crm-not-connected'],
    }),
  },
  '/changes': {
    get: operation({
      operationId: 'listChanges', tag: 'Changes', service: 'changefeed', scope: 'conversions:read', website: true,
      summary: 'Change feed',
      description: `Changes newest first. Every change has a feed position. A request without a cursor starts a run over the changes recorded at or after \`since\` (default: the last ${CHANGES_DEFAULT_LOOKBACK_HOURS} hours) up to the newest one at that moment, in pages; while meta.has_more is true, pass next_cursor for the next page (changes that arrive meanwhile are not mixed into the run). When the run ends, next_cursor is still returned: store it (only after the page is applied), and the next run started with it returns only changes newer than everything already returned. Following the cursor never misses or repeats a change. Skip changes whose source begins api: if you made them. Changes are kept ${CHANGE_RETENTION_DAYS} days: a since or cursor older than that is 400 window-too-large, whose remediation says to do a full read and resume with since = the time the read started (decided). An edited cursor, or one used with another website or types filter, is 400 invalid-request: restart paging.`,
      parameters: [
        { name: 'since', in: 'query', description: 'Changes at or after this time; ignored when cursor is given.', schema: { type: 'string', format: 'date-time' }, 'x-sightline-error-kind': 'invalid-request' },
        cursorParam,
        limitParam(LIMITS.changes, 'changes'),
        listParam('types', 'Only these change types (comma-separated).', enumOf(CHANGE_TYPES), { minItems: 1, errorKind: 'invalid-request' }),
      ],
      ok: { description: 'Changes, next_cursor and meta.has_more.', schema: ref('ChangesResponse') },
      errors: ['window-too-large'],
    }),
  },
};
