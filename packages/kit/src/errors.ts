// Typed domain errors. Services throw these; the gateway turns any of them into the spec's
// problem document (one function: http/problem.ts). Across the bus they travel as RemoteProblem.

/** Every error kind the public API can answer with (API-SPEC "Errors" plus the ones we decided). */
export const PROBLEM_KINDS = {
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
  'method-not-allowed': 405,
  conflict: 409,
  /** GET /deals, /pipelines, /companies with no CRM connected (decided: 409, see the OpenAPI document). */
  'crm-not-connected': 409,
  'payload-too-large': 413,
  'unsupported-media-type': 415,
  'rate-limit-exceeded': 429,
  'quota-exceeded': 429,
  'too-many-concurrent': 429,
  internal: 500,
  'not-implemented': 501,
  'service-unavailable': 503,
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

export interface ProblemInit {
  detail: string;
  remediation: string;
  allowed?: readonly string[];
  /** Extra members added to the problem document (for example `missing_scope`). */
  extra?: Record<string, unknown>;
  /** Response headers to send with the problem (for example Retry-After). */
  headers?: Record<string, string>;
}

export class ProblemError extends Error {
  override name = 'ProblemError';
  readonly status: number;
  readonly remediation: string;
  readonly allowed?: readonly string[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(readonly kind: ProblemKind, init: ProblemInit) {
    super(init.detail);
    this.status = PROBLEM_KINDS[kind];
    this.remediation = init.remediation;
    if (init.allowed) this.allowed = init.allowed;
    if (init.extra) this.extra = init.extra;
    if (init.headers) this.headers = init.headers;
  }
}

export function isProblemKind(value: string): value is ProblemKind {
  return Object.prototype.hasOwnProperty.call(PROBLEM_KINDS, value);
}
