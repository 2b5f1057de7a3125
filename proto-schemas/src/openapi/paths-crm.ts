// CRM mirrors (crm-sync) and the change feed (changefeed).
import { CHANGE_RETENTION_DAYS, CHANGES_DEFAULT_LOOKBACK_HOURS, LIMITS } from '../registry/limits';
import { CHANGE_TYPES, STAGE_BUCKETS } from '../registry/vocabulary';
import { operation } from './operation';
import { cursorParam, limitParam, listParam, totalCountParam } from './parameters';
import { enumOf, listOf, ref } from './refs';
import type { PathItemObject } from './types';

const NO_CRM = 'With no CRM connected the answer is 409 crm-not-connected (decided: the spec asks for a connection-required error, not an empty list), whose remediation says to connect a CRM in the app.';

export const crmPaths: Record<string, PathItemObject> = {
  '/deals': {
    get: operation({
      operationId: 'listDeals', tag: 'CRM', service: 'crm-sync', scope: 'deals:read', website: true,
      summary: 'Deals mirrored from the CRM',
      description: `Deals with computed first-touch and last-touch attribution, most recently updated first. Every row has stage.normalized_bucket (open, won, lost, other); stage names are customer-chosen, so rely on the bucket. ${NO_CRM}`,
      parameters: [
        { name: 'stage_bucket', in: 'query', description: 'Only deals whose stage is in this bucket.', schema: enumOf(STAGE_BUCKETS), 'x-sightline-error-kind': 'invalid-request' },
        { name: 'updated_since', in: 'query', description: 'Only deals updated at or after this time.', schema: { type: 'string', format: 'date-time' }, 'x-sightline-error-kind': 'invalid-request' },
        cursorParam,
        limitParam(LIMITS.deals, 'deals'),
        totalCountParam,
      ],
      ok: { description: 'Deals, meta and next_cursor.', schema: listOf(ref('Deal'), true) },
      errors: ['crm-not-connected'],
    }),
  },
  '/pipelines': {
    get: operation({
      operationId: 'listPipelines', tag: 'CRM', service: 'crm-sync', scope: 'deals:read', website: true,
      summary: 'Pipelines and their stage vocabulary',
      description: `Each pipeline with its stages in order and each stage's normalized bucket: the stage vocabulary the workspace uses (valid values of the stages parameter). ${NO_CRM}`,
      ok: { description: 'Pipelines.', schema: listOf(ref('Pipeline'), false) },
      errors: ['crm-not-connected'],
    }),
  },
  '/companies': {
    get: operation({
      operationId: 'listCompanies', tag: 'CRM', service: 'crm-sync', scope: 'deals:read', website: true,
      summary: 'Companies mirrored from the CRM',
      description: `Companies (accounts), most recently updated first. ${NO_CRM}`,
      parameters: [
        { name: 'domain', in: 'query', description: 'Only the company with this domain.', schema: { type: 'string', minLength: 1, maxLength: 253 }, 'x-sightline-error-kind': 'invalid-request' },
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
