// Operator routes (admin port, admin token) that rebuild a website's funnels read model from the facts:
//   POST /admin/funnels/rebuilds      {website_id, funnel_id?}  → 202 the job
//   GET  /admin/funnels/rebuilds/:id                            → the job: phase, done/total units, seconds
// First the website's session lists (person_touches, one statement), then a new generation of each
// funnel's attempts; reads answer from the events until that is built, so they stay exact meanwhile.
// The attempts are built by whichever process claims them (progress is kept in Postgres). Jobs live
// in this process's memory: they are how long an operator watches, not a record.
import { randomUUID } from 'node:crypto';
import { adminRoute, ProblemError, type ModuleLifecycle } from '@sightline/kit';
import type { FunnelsRepo } from './funnels.repo';
import type { ReadModel } from './read-model';

type AdminRouter = Parameters<NonNullable<ModuleLifecycle['adminRoutes']>>[0];

export interface RebuildJob {
  id: string;
  website_id: string;
  /** The funnels rebuilt and the generation each is built as. */
  funnels: { id: string; generation: number }[];
  status: 'running' | 'done' | 'failed';
  /** 'sessions': the website's session lists; 'attempts': the funnels' attempts. */
  phase: 'sessions' | 'attempts';
  /** Units (identity ranges and merge-group chunks) built, over all the job's funnels. */
  done: number;
  total: number;
  started_at: string;
  finished_at: string | null;
  seconds: number;
  error: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEEP = 50;

function uuidField(body: unknown, name: string, required: boolean): string | null {
  const value = (body as Record<string, unknown> | null)?.[name];
  if (value === undefined && !required) return null;
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new ProblemError('invalid-request', {
      detail: `${name} must be a UUID.`,
      remediation: 'Send {"website_id": "...", "funnel_id": "..." (optional)}; `sightline funnels rebuild --website <domain>` looks the website up for you.',
    });
  }
  return value.toLowerCase();
}

export function rebuildAdminRoutes(router: AdminRouter, repo: FunnelsRepo, readModel: ReadModel, wake: () => void): void {
  const jobs = new Map<string, RebuildJob>();

  /** The job as its funnels stand in Postgres. */
  const refresh = async (job: RebuildJob): Promise<RebuildJob> => {
    if (job.status !== 'running' || job.phase === 'sessions') {
      if (job.status === 'running') job.seconds = (Date.now() - Date.parse(job.started_at)) / 1000;
      return job;
    }
    const rows = new Map((await repo.ofWebsite(job.website_id)).map((r) => [r.id, r]));
    let done = 0;
    let total = 0;
    let finished = true;
    let error: string | null = null;
    for (const f of job.funnels) {
      const row = rows.get(f.id);
      // Deleted, or changed again (a newer generation is building): nothing more of this job to wait for.
      if (!row || row.generation > f.generation) continue;
      done += row.build_done;
      total += row.build_total;
      if (row.read_model !== 'ready') finished = false;
      if (row.build_error) error = row.build_error;
    }
    const seconds = (Date.now() - Date.parse(job.started_at)) / 1000;
    Object.assign(job, { done, total, seconds });
    if (finished) Object.assign(job, { status: 'done', finished_at: new Date().toISOString() });
    else if (error) Object.assign(job, { status: 'failed', error, finished_at: new Date().toISOString() });
    return job;
  };

  router.post('/funnels/rebuilds', adminRoute(async (req) => {
    const websiteId = uuidField(req.body, 'website_id', true) as string;
    const funnelId = uuidField(req.body, 'funnel_id', false);
    const funnels = (await repo.ofWebsite(websiteId)).filter((f) => funnelId === null || f.id === funnelId);
    const first = funnels[0];
    if (!first) {
      throw new ProblemError('not-found', {
        detail: funnelId ? `No funnel ${funnelId} on website ${websiteId}.` : `Website ${websiteId} has no funnels.`,
        remediation: 'Check the website (and funnel) id; GET /v1/funnels lists a website\'s funnels.',
      });
    }
    const job: RebuildJob = {
      id: randomUUID(), website_id: websiteId, funnels: [], status: 'running', phase: 'sessions',
      done: 0, total: 0, started_at: new Date().toISOString(), finished_at: null, seconds: 0, error: null,
    };
    jobs.set(job.id, job);
    readModel.storeTouches({ websiteId, workspaceId: first.workspace_id }, null)
      .then(async () => {
        const started = await repo.startRebuild(websiteId, funnelId);
        Object.assign(job, { phase: 'attempts', funnels: started.map((r) => ({ id: r.id, generation: r.generation })) });
        wake();
      })
      .catch((error: unknown) => Object.assign(job, { status: 'failed', error: error instanceof Error ? error.message : String(error), finished_at: new Date().toISOString() }));
    const old = [...jobs.values()].filter((j) => j.status !== 'running');
    for (const j of old.slice(0, Math.max(0, old.length - KEEP))) jobs.delete(j.id);
    return { status: 202, body: job };
  }));

  router.get('/funnels/rebuilds/:id', adminRoute(async (req) => {
    const job = jobs.get(String(req.params['id']));
    if (!job) {
      throw new ProblemError('not-found', {
        detail: `No rebuild ${String(req.params['id'])} in this process.`,
        remediation: 'Rebuild jobs are kept in the memory of the process that started them; start one with POST /admin/funnels/rebuilds.',
      });
    }
    return { status: 200, body: await refresh(job) };
  }));
}
