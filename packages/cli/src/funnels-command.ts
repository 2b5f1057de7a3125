// `sightline funnels rebuild --website <domain> [--funnel <id>]`: recomputes a website's funnels
// read model (every person's session list, then each funnel's attempts as a new generation) from
// the stored facts, through the funnels admin routes (/admin/funnels/rebuilds), with a progress
// bar, and says how long it took. Reads stay exact meanwhile (they answer from the events).
import type { Command } from 'commander';
import { adminRequest, type AdminConnection } from './admin-client';
import { followJob } from './job-progress';

/** A rebuild job as the funnels admin API reports it. */
export interface FunnelsRebuildJob {
  id: string;
  website_id: string;
  funnels: { id: string; generation: number }[];
  status: 'running' | 'done' | 'failed';
  phase: 'sessions' | 'attempts';
  done: number;
  total: number;
  seconds: number;
  error: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PHASES: Record<FunnelsRebuildJob['phase'], string> = { sessions: 'session lists', attempts: 'attempts' };

/** One line of progress (for logs and pipes). */
export function funnelsRebuildLine(job: FunnelsRebuildJob): string {
  const funnels = `${job.funnels.length} funnel${job.funnels.length === 1 ? '' : 's'}`;
  if (job.status === 'done') return `rebuilt in ${job.seconds.toFixed(1)} s: ${funnels}, ${job.total} units`;
  if (job.status === 'failed') return `rebuild failed after ${job.seconds.toFixed(1)} s: ${job.error ?? 'unknown error'} (the build is retried in the background; reads stay exact)`;
  if (job.phase === 'sessions') return `session lists: ${job.seconds.toFixed(0)} s`;
  const percent = job.total > 0 ? Math.floor((job.done / job.total) * 100) : 0;
  return `attempts of ${funnels}: ${job.done}/${job.total} (${percent}%), ${job.seconds.toFixed(0)} s`;
}

export interface FunnelsRebuildOptions {
  /** The website's domain or id. */
  website: string;
  funnel?: string;
  /** Draw a bar (a terminal) or print a line every few seconds. */
  tty: boolean;
  stream: NodeJS.WritableStream;
  pollMs?: number;
}

/** Starts a rebuild and follows it to its end; throws when it failed. */
export async function rebuildFunnels(conn: AdminConnection, opts: FunnelsRebuildOptions): Promise<FunnelsRebuildJob> {
  const websiteId = UUID.test(opts.website)
    ? opts.website
    : (await adminRequest<{ id: string }>(conn, 'GET', `/websites/${encodeURIComponent(opts.website.toLowerCase())}`)).id;
  const job = await adminRequest<FunnelsRebuildJob>(conn, 'POST', '/funnels/rebuilds', { website_id: websiteId, ...(opts.funnel ? { funnel_id: opts.funnel } : {}) });
  return followJob(conn, job, {
    path: '/funnels/rebuilds',
    line: funnelsRebuildLine,
    // The session lists are one statement: the bar starts with the attempts, whose units are counted.
    phase: (j) => (j.phase === 'attempts' && j.total > 0 ? PHASES.attempts : null),
    tty: opts.tty,
    stream: opts.stream,
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
  });
}

export function registerFunnelsCommands(program: Command, conn: () => AdminConnection): void {
  const funnels = program.command('funnels').description('the funnels read model (needs funnels)');
  funnels
    .command('rebuild')
    .description("recompute a website's funnels read model (session lists, then every funnel's attempts) from its facts; reads stay exact meanwhile")
    .requiredOption('--website <domain|id>', 'the website to rebuild')
    .option('--funnel <id>', 'only this funnel\'s attempts (the session lists are always rebuilt)')
    .option('--json', 'print the finished job as JSON')
    .action(async (opts: { website: string; funnel?: string; json?: boolean }) => {
      const job = await rebuildFunnels(conn(), {
        website: opts.website,
        ...(opts.funnel ? { funnel: opts.funnel } : {}),
        tty: Boolean(process.stderr.isTTY) && !opts.json,
        stream: process.stderr,
      });
      if (opts.json) process.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
    });
}
