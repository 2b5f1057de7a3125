// `sightline attribution rebuild --website <domain>`: recomputes a website's attribution read model
// (journeys and credit of every outcome, the sessions layout) from its facts, through attribution's
// admin routes (/admin/attribution/rebuilds), with a progress bar, and says how long it took.
import type { Command } from 'commander';
import { adminRequest, type AdminConnection } from './admin-client';
import { followJob } from './job-progress';

/** A rebuild job as attribution's admin API reports it. */
export interface RebuildJob {
  id: string;
  website_id: string;
  workspace_id: string;
  status: 'running' | 'done' | 'failed';
  phase: 'traffic' | 'journeys' | null;
  done: number;
  total: number;
  seconds: number;
  sessions: number | null;
  outcomes: number | null;
  published: number | null;
  error: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PHASES: Record<NonNullable<RebuildJob['phase']>, string> = { traffic: 'sessions', journeys: 'outcomes' };

/** One line of progress (for logs and pipes). */
export function rebuildLine(job: RebuildJob): string {
  if (job.status === 'done') {
    return `rebuilt in ${job.seconds.toFixed(1)} s: ${job.sessions ?? 0} sessions, ${job.outcomes ?? 0} outcomes, ${job.published ?? 0} conversion.attributed published`;
  }
  if (job.status === 'failed') return `rebuild failed after ${job.seconds.toFixed(1)} s: ${job.error ?? 'unknown error'}`;
  const what = job.phase ? PHASES[job.phase] : 'starting';
  const percent = job.total > 0 ? Math.floor((job.done / job.total) * 100) : 0;
  return `${what}: ${job.done}/${job.total} (${percent}%), ${job.seconds.toFixed(0)} s`;
}

export interface RebuildOptions {
  website: string;
  workspace?: string;
  /** Draw a bar (a terminal) or print a line every few seconds. */
  tty: boolean;
  stream: NodeJS.WritableStream;
  pollMs?: number;
}

/** Starts a rebuild and follows it to its end; throws when it failed. */
export async function rebuildWebsite(conn: AdminConnection, opts: RebuildOptions): Promise<RebuildJob> {
  let websiteId = opts.website;
  let workspaceId = opts.workspace;
  if (!UUID.test(opts.website)) {
    const site = await adminRequest<{ id: string; workspace_id: string }>(conn, 'GET', `/websites/${encodeURIComponent(opts.website.toLowerCase())}`);
    websiteId = site.id;
    workspaceId = site.workspace_id;
  }
  if (!workspaceId) throw new Error("--workspace <id> is needed when --website is an id (or give the website's domain)");
  const job = await adminRequest<RebuildJob>(conn, 'POST', '/attribution/rebuilds', { website_id: websiteId, workspace_id: workspaceId });
  return followJob(conn, job, {
    path: '/attribution/rebuilds',
    line: rebuildLine,
    phase: (j) => (j.phase ? PHASES[j.phase] : null),
    tty: opts.tty,
    stream: opts.stream,
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
  });
}

export function registerAttributionCommands(program: Command, conn: () => AdminConnection): void {
  const attribution = program.command('attribution').description('the attribution read model (needs attribution)');
  attribution
    .command('rebuild')
    .description("recompute a website's read model (journeys, credit, sessions) from its facts; consumers keep running meanwhile")
    .requiredOption('--website <domain|id>', 'the website to rebuild')
    .option('--workspace <id>', 'its workspace (needed when --website is an id)')
    .option('--json', 'print the finished job as JSON')
    .action(async (opts: { website: string; workspace?: string; json?: boolean }) => {
      const job = await rebuildWebsite(conn(), {
        website: opts.website,
        ...(opts.workspace ? { workspace: opts.workspace } : {}),
        tty: Boolean(process.stderr.isTTY) && !opts.json,
        stream: process.stderr,
      });
      if (opts.json) process.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
    });
}
