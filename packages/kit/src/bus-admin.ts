// Operator routes (admin port, admin token) over a service's dead letters, on every process that
// runs that service's consumers (the runner registers them):
//   GET  /admin/bus/dead-letters/:service                                → what a redrive would move now
//   POST /admin/bus/dead-letters/:service/redrive  {dry_run, max?}       → moves them back (or only says what would move)
// A redrive puts each dead letter back in that service's own queue (its partition's, for a
// partitioned type) with its failure count reset, so after fixing the cause an operator replays what
// failed; letters that cannot be moved stay and are counted as kept (bus/redrive.ts). `sightline bus
// redrive` and `sightline bus dead-letters` call these.
import type { Router } from 'express';
import { DEFAULT_REDRIVE_MAX } from './bus/redrive';
import type { Bus, RedriveResult } from './bus/types';
import { ProblemError } from './errors';
import { adminRoute } from './http/admin';

/** The most one request may move; a larger backlog takes several. */
export const MAX_REDRIVE_PER_REQUEST = 100_000;

/** A redrive as the admin API answers it. */
export interface RedriveReport {
  service: string;
  dry_run: boolean;
  /** Dead letters moved back (a dry run: that would move). */
  moved: number;
  by_type: Record<string, number>;
  by_reason: Record<string, number>;
  /** The first ids moved (at most 10), oldest first. */
  first_ids: string[];
  /** Left in the dead-letter queue because they cannot be moved (unparseable, partition unknown, no queue). */
  kept: number;
  kept_by: Record<string, number>;
  /** Still in the dead-letter queue afterwards. */
  remaining: number;
}

export function redriveReport(result: RedriveResult): RedriveReport {
  return {
    service: result.service,
    dry_run: result.dryRun,
    moved: result.moved,
    by_type: result.byType,
    by_reason: result.byReason,
    first_ids: result.firstIds,
    kept: result.kept,
    kept_by: result.keptBy,
    remaining: result.remaining,
  };
}

const BODY_HELP = `Send {"dry_run": true|false, "max": <1 to ${MAX_REDRIVE_PER_REQUEST}, default ${DEFAULT_REDRIVE_MAX}>}; \`sightline bus redrive --service <name> [--dry-run] [--max N]\` does it for you.`;

/** `consumedServices`: the services whose consumers this process runs (read per request: modules start after the routes are registered). */
export function busAdminRoutes(router: Router, bus: Bus, consumedServices: () => readonly string[]): void {
  const serviceOf = (param: unknown): string => {
    const service = String(param);
    const allowed = [...consumedServices()].sort();
    if (!allowed.includes(service)) {
      throw new ProblemError('not-found', {
        detail: `This process runs no consumers of ${JSON.stringify(service)}, so it does not redrive its dead letters.`,
        remediation: allowed.length > 0
          ? 'Use one of the allowed services, or ask a process that runs the service (its admin port).'
          : 'Ask a process that runs the service\'s consumers (its admin port); this one runs none.',
        allowed,
      });
    }
    return service;
  };

  router.get('/bus/dead-letters/:service', adminRoute(async (req) => {
    const service = serviceOf(req.params['service']);
    return { status: 200, body: redriveReport(await bus.redriveDeadLetters(service, { dryRun: true })) };
  }));

  router.post('/bus/dead-letters/:service/redrive', adminRoute(async (req) => {
    const service = serviceOf(req.params['service']);
    const { dryRun, max } = redriveBody(req.body);
    return { status: 200, body: redriveReport(await bus.redriveDeadLetters(service, { dryRun, max })) };
  }));
}

/** The request body: `dry_run` required (a typo must not turn a look into a move), `max` optional, nothing else. */
function redriveBody(body: unknown): { dryRun: boolean; max: number } {
  const invalid = (detail: string) => new ProblemError('invalid-request', { detail, remediation: BODY_HELP });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object.');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => k !== 'dry_run' && k !== 'max');
  if (unknown.length > 0) throw invalid(`Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}: only dry_run and max are accepted.`);
  if (typeof fields['dry_run'] !== 'boolean') throw invalid('dry_run is required and must be true or false.');
  const max = fields['max'] ?? DEFAULT_REDRIVE_MAX;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_REDRIVE_PER_REQUEST) {
    throw invalid(`max must be a whole number from 1 to ${MAX_REDRIVE_PER_REQUEST}.`);
  }
  return { dryRun: fields['dry_run'], max };
}
