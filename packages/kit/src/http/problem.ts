// The one place any error becomes the spec's problem document (application/problem+json).
import type { Response } from 'express';
import { RpcNoConsumerError, RpcRemoteError, RpcTimeoutError } from '../bus/types';
import { isProblemKind, PROBLEM_KINDS, ProblemError, type ProblemKind } from '../errors';

export const PROBLEM_TITLES: Record<ProblemKind, string> = {
  'invalid-request': 'Invalid request',
  'unknown-metric': 'Unknown metric',
  'unknown-dimension': 'Unknown dimension',
  'unknown-filter-operator': 'Unknown filter operator',
  'invalid-window': 'Invalid window',
  'window-too-large': 'Window too large',
  'unsupported-combination': 'Unsupported combination',
  unauthorized: 'Unauthorized',
  'insufficient-scope': 'Insufficient scope',
  'origin-not-allowed': 'Origin not allowed',
  'website-not-found': 'Website not found',
  'not-found': 'Not found',
  'method-not-allowed': 'Method not allowed',
  conflict: 'Conflict',
  'crm-not-connected': 'CRM not connected',
  'payload-too-large': 'Payload too large',
  'unsupported-media-type': 'Unsupported media type',
  'headers-too-large': 'Request header fields too large',
  'rate-limit-exceeded': 'Rate limit exceeded',
  'quota-exceeded': 'Monthly quota exceeded',
  'too-many-concurrent': 'Too many concurrent queries',
  internal: 'Internal error',
  'not-implemented': 'Not implemented',
  'service-unavailable': 'Service unavailable',
};

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  remediation: string;
  allowed?: string[];
  instance: string;
  [extra: string]: unknown;
}

export interface RenderedProblem {
  document: ProblemDocument;
  headers: Record<string, string>;
  /** True when the error was not a domain error: the caller logs it (never the client). */
  unexpected: boolean;
}

/** Turns anything thrown into a problem document. Unknown errors become a generic 500. */
export function renderProblem(error: unknown, requestId: string, typeBase: string): RenderedProblem {
  let kind: ProblemKind = 'internal';
  let detail = 'An unexpected error occurred while handling the request.';
  let remediation = 'Retry after a short delay; if it persists, report the request id to the operator.';
  let allowed: readonly string[] | undefined;
  let extra: Record<string, unknown> | undefined;
  let headers: Record<string, string> = {};
  let unexpected = false;

  if (error instanceof ProblemError) {
    ({ kind, remediation, allowed, extra } = error);
    detail = error.message;
    headers = error.headers ?? {};
  } else if (error instanceof RpcRemoteError && isProblemKind(error.problem.kind)) {
    kind = error.problem.kind;
    if (kind !== 'internal') {
      detail = error.problem.detail;
      remediation = error.problem.remediation ?? remediation;
      allowed = error.problem.allowed;
      extra = error.problem.extra;
      headers = error.problem.headers ?? {};
    }
  } else if (error instanceof RpcNoConsumerError) {
    // Said at once, not after the deadline: nobody runs the service that answers this now.
    kind = 'service-unavailable';
    detail = `No consumer serves this request: no instance of the ${error.service} service is running.`;
    remediation = 'Retry in a few seconds; if it persists, the operator should check that the service is deployed and ready.';
    headers = { 'Retry-After': '5' };
  } else if (error instanceof RpcTimeoutError) {
    kind = 'service-unavailable';
    detail = 'The service that answers this request did not reply in time.';
    remediation = 'Retry after a few seconds with the request unchanged.';
    headers = { 'Retry-After': '5' };
  } else {
    unexpected = true;
  }

  const document: ProblemDocument = {
    type: `${typeBase.replace(/\/$/, '')}/problems/${kind}`,
    title: PROBLEM_TITLES[kind],
    status: PROBLEM_KINDS[kind],
    detail,
    remediation,
    ...(allowed ? { allowed: [...allowed] } : {}),
    instance: requestId,
    ...(extra ?? {}),
  };
  return { document, headers, unexpected };
}

export function sendProblem(res: Response, problem: RenderedProblem): void {
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  res.status(problem.document.status).type('application/problem+json').send(JSON.stringify(problem.document));
}
