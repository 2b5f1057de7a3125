// Operator routes (admin port, admin token) that rebuild a website's read model from its facts:
//   POST /admin/attribution/rebuilds      {website_id, workspace_id}  → 202 the job (one per website at a time)
//   GET  /admin/attribution/rebuilds/:id                              → the job: phase, done/total, seconds
// `sightline attribution rebuild --website <domain>` starts one and draws its progress. Jobs live
// in this process's memory: they are how long an operator watches, not a record.
import { randomUUID } from 'node:crypto';
import { adminRoute, ProblemError, type ModuleLifecycle } from '@sightline/kit';
import type { ReadModel, RebuildProgress } from './read-model';

type AdminRouter = Parameters<NonNullable<ModuleLifecycle['adminRoutes']>>[0];

export interface RebuildJob {
  id: string;
  website_id: string;
  workspace_id: string;
  status: 'running' | 'done' | 'failed';
  phase: RebuildProgress['phase'] | null;
  done: number;
  total: number;
  started_at: string;
  finished_at: string | null;
  /** Seconds the rebuild took (or has taken so far). */
  seconds: number;
  sessions: number | null;
  outcomes: number | null;
  /** conversion.attributed messages the rebuild published (first or last touches that changed). */
  published: number | null;
  error: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Finished jobs kept for status reads. */
const KEEP_FINISHED = 50;

function uuidField(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null)?.[name];
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new ProblemError('invalid-request', {
      detail: `${name} must be a UUID.`,
      remediation: 'Send {"website_id": "...", "workspace_id": "..."}; `sightline attribution rebuild --website <domain>` looks both up for you.',
    });
  }
  return value.toLowerCase();
}

export function rebuildAdminRoutes(router: AdminRouter, readModel: ReadModel, onError: (error: unknown, job: RebuildJob) => void): void {
  const jobs = new Map<string, RebuildJob>();
  const snapshot = (job: RebuildJob): RebuildJob => ({
    ...job,
    seconds: job.status === 'running' ? (Date.now() - Date.parse(job.started_at)) / 1000 : job.seconds,
  });

  router.post('/attribution/rebuilds', adminRoute(async (req) => {
    const websiteId = uuidField(req.body, 'website_id');
    const workspaceId = uuidField(req.body, 'workspace_id');
    const running = [...jobs.values()].find((j) => j.website_id === websiteId && j.status === 'running');
    if (running) {
      throw new ProblemError('conflict', {
        detail: `A rebuild of website ${websiteId} is already running (${running.id}).`,
        remediation: `Follow it with GET /admin/attribution/rebuilds/${running.id}, and start another once it has finished.`,
      });
    }
    const job: RebuildJob = {
      id: randomUUID(), website_id: websiteId, workspace_id: workspaceId, status: 'running', phase: null, done: 0, total: 0,
      started_at: new Date().toISOString(), finished_at: null, seconds: 0, sessions: null, outcomes: null, published: null, error: null,
    };
    jobs.set(job.id, job);
    const finished = [...jobs.values()].filter((j) => j.status !== 'running');
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) jobs.delete(old.id);
    readModel
      .rebuild({ websiteId, workspaceId }, (p) => Object.assign(job, { phase: p.phase, done: p.done, total: p.total }))
      .then((r) => Object.assign(job, { status: 'done', seconds: r.seconds, sessions: r.sessions, outcomes: r.outcomes, published: r.published }))
      .catch((error: unknown) => {
        Object.assign(job, { status: 'failed', seconds: (Date.now() - Date.parse(job.started_at)) / 1000, error: error instanceof Error ? error.message : String(error) });
        onError(error, job);
      })
      .finally(() => void (job.finished_at = new Date().toISOString()));
    return { status: 202, body: snapshot(job) };
  }));

  router.get('/attribution/rebuilds/:id', adminRoute(async (req) => {
    const job = jobs.get(String(req.params['id']));
    if (!job) {
      throw new ProblemError('not-found', {
        detail: `No rebuild ${String(req.params['id'])} in this process.`,
        remediation: 'Rebuild jobs are kept in the memory of the process that runs attribution; start one with POST /admin/attribution/rebuilds.',
      });
    }
    return { status: 200, body: snapshot(job) };
  }));
}
