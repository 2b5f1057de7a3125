// A problem document answered by the API, thrown by the helpers that turn an answer into data.
import type { components } from './schema';

export type Problem = components['schemas']['Problem'];

/** The error kind: the last segment of the problem's `type` URI (`unknown-metric`, `not-found`, ...). */
export function problemKind(problem: Pick<Problem, 'type'>): string {
  return problem.type.slice(problem.type.lastIndexOf('/') + 1);
}

export class SightlineApiError extends Error {
  readonly status: number;
  readonly kind: string;
  readonly problem: Problem;

  constructor(problem: Problem, status: number) {
    super(`${status} ${problemKind(problem)}: ${problem.detail}${problem.remediation ? ` ${problem.remediation}` : ''}`);
    this.name = 'SightlineApiError';
    this.status = status;
    this.kind = problemKind(problem);
    this.problem = problem;
  }
}

/** True for a problem document body (the answer of any non-2xx status). */
export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' && typeof (value as { status?: unknown }).status === 'number';
}
