// Typed domain errors. Services throw these; the gateway turns any of them into the spec's
// problem document (one function: http/problem.ts). Across the bus they travel as RemoteProblem.

import { PROBLEM_KINDS } from '@sightline/proto-schemas';

/** Every error kind the public API can answer with, and its status (defined once, in proto-schemas). */
export { PROBLEM_KINDS };

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
