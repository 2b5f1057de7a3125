// Every problem kind the API can answer with, and its HTTP status: the spec's kinds plus the ones
// decided here. The one source: @sightline/kit's ProblemError and the document both read it.

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
  /** POST /collect (the tracker's endpoint) from a page that is not on the website's domain. */
  'origin-not-allowed': 403,
  'website-not-found': 404,
  'not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  /** GET /deals, /pipelines, /companies with no CRM connected. */
  'crm-not-connected': 409,
  'payload-too-large': 413,
  'unsupported-media-type': 415,
  /** Request headers larger than the server reads (16 KB in all); refused before the request is parsed. */
  'headers-too-large': 431,
  'rate-limit-exceeded': 429,
  'quota-exceeded': 429,
  'too-many-concurrent': 429,
  internal: 500,
  'not-implemented': 501,
  'service-unavailable': 503,
} as const;

export type DocumentProblemKind = keyof typeof DOCUMENT_PROBLEM_KINDS;

/** Base of the problem `type` URI; the kind is its last segment. */
export const PROBLEM_TYPE_BASE = 'https://sightline.dev/problems/';
