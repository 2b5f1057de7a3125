// Problem kinds the document names, with their HTTP status. Mirrors @sightline/kit's PROBLEM_KINDS
// (which cannot be imported: kit depends on this package) plus `crm-not-connected`, decided here.

export const DOCUMENT_PROBLEM_KINDS = {
  'invalid-request': 400,
  'unknown-metric': 400,
  'unknown-dimension': 400,
  'unknown-filter-operator': 400,
  'invalid-window': 400,
  'window-too-large': 400,
  'unsupported-combination': 400,
  unauthorized: 401,
  'insufficient-scope': 403,
  'website-not-found': 404,
  'not-found': 404,
  'crm-not-connected': 409,
  'payload-too-large': 413,
  'rate-limit-exceeded': 429,
  'quota-exceeded': 429,
  'too-many-concurrent': 429,
  internal: 500,
  'service-unavailable': 503,
} as const;

export type DocumentProblemKind = keyof typeof DOCUMENT_PROBLEM_KINDS;

/** Base of the problem `type` URI; the kind is its last segment. */
export const PROBLEM_TYPE_BASE = 'https://sightline.dev/problems/';
