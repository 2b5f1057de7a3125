// The query of GET /paths as the handler uses it. The gateway has already validated, split and
// defaulted it against the OpenAPI document; this restates defaults and clamps so a direct RPC
// caller (tests, other gateways) gets the same answer, and refuses what the document refuses.
import { ProblemError } from '@sightline/kit';
import { DEFAULT_PATH_STEP, LIMITS, PATH_STEP_NAMES, type PathStepName } from '@sightline/proto-schemas';
import type { WindowQuery } from '../analytics/context';

export interface PathsQuery extends WindowQuery {
  step?: string;
  stages?: string[] | string;
  types?: string[] | string;
  events?: string[] | string;
  max_touches?: number | string;
  limit?: number | string;
}

export interface PathsOptions {
  step: PathStepName;
  stages: string[];
  types: string[];
  events: string[];
  maxTouches: number;
  limit: number;
}

export function pathsOptions(q: PathsQuery): PathsOptions {
  const step = q.step ?? DEFAULT_PATH_STEP;
  if (!(PATH_STEP_NAMES as readonly string[]).includes(step)) {
    throw new ProblemError('invalid-request', {
      detail: `step '${step}' is not a path step.`,
      remediation: 'Use one of the values in `allowed`.',
      allowed: PATH_STEP_NAMES,
    });
  }
  const stages = list(q.stages);
  const types = list(q.types);
  const events = list(q.events);
  if (stages.length > 0 && (types.length > 0 || events.length > 0)) {
    throw new ProblemError('unsupported-combination', {
      detail: 'types and events filter conversions; stages selects milestones instead, and the two are never blended.',
      remediation: 'Send either stages, or types/events, not both.',
    });
  }
  return {
    step: step as PathStepName,
    stages, types, events,
    maxTouches: clampedInteger('max_touches', q.max_touches, LIMITS.max_touches),
    limit: clampedInteger('limit', q.limit, LIMITS.paths),
  };
}

function list(value: string[] | string | undefined): string[] {
  const items = Array.isArray(value) ? value : value === undefined ? [] : value.split(',');
  return [...new Set(items.map((v) => v.trim()).filter((v) => v !== ''))];
}

function clampedInteger(name: string, value: number | string | undefined, limit: { default: number; maximum: number }): number {
  if (value === undefined) return limit.default;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new ProblemError('invalid-request', {
      detail: `${name} must be a positive integer.`,
      remediation: `Send ${name} between 1 and ${limit.maximum}, or leave it out for ${limit.default}.`,
    });
  }
  return Math.min(n, limit.maximum);
}
