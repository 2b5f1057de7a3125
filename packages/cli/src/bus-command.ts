// `sightline bus redrive --service <svc> [--dry-run] [--max N]` and `sightline bus dead-letters
// --service <svc>`: a service's dead letters, through the admin routes of a process that runs its
// consumers (/admin/bus/dead-letters/:service). A redrive moves them back to that service's own queue
// with their failure count reset, once the cause is fixed; a dry run and dead-letters only look.
import type { Command } from 'commander';
import type { RedriveReport } from '@sightline/kit';
import { adminRequest, type AdminConnection } from './admin-client';

export type { RedriveReport };

export interface RedriveOptions {
  service: string;
  dryRun: boolean;
  max?: number;
}

export function redriveDeadLetters(conn: AdminConnection, opts: RedriveOptions): Promise<RedriveReport> {
  return adminRequest<RedriveReport>(conn, 'POST', `/bus/dead-letters/${encodeURIComponent(opts.service)}/redrive`, {
    dry_run: opts.dryRun,
    ...(opts.max !== undefined ? { max: opts.max } : {}),
  });
}

export function deadLetterCounts(conn: AdminConnection, service: string): Promise<RedriveReport> {
  return adminRequest<RedriveReport>(conn, 'GET', `/bus/dead-letters/${encodeURIComponent(service)}`);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const counts = (by: Record<string, number>) => Object.entries(by).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k, n]) => `${k} ${n}`).join(', ');

/**
 * What a redrive did (or would do), for people: the first line says it all
 * ("moved 12 dead letters of ingest back to its queue (ingest.batch_received 12); 0 kept"), the next
 * ones give the reasons, the kept letters' causes and the first ids.
 */
export function redriveSummary(report: RedriveReport): string {
  const verb = report.dry_run ? 'would move' : 'moved';
  const types = report.moved > 0 ? ` (${counts(report.by_type)})` : '';
  const lines = [`${verb} ${plural(report.moved, 'dead letter')} of ${report.service} back to its queue${types}; ${report.kept} kept; ${report.remaining} in the dead-letter queue${report.dry_run ? ' (nothing moved)' : ''}`];
  if (report.moved > 0) lines.push(`  reasons: ${counts(report.by_reason)}`);
  if (report.kept > 0) lines.push(`  kept (left in the dead-letter queue): ${counts(report.kept_by)}`);
  if (report.first_ids.length > 0) lines.push(`  first ids: ${report.first_ids.join(', ')}`);
  return lines.join('\n');
}

/** `dead-letters`: what is there, and what a redrive would do with it. */
export function deadLettersSummary(report: RedriveReport): string {
  if (report.remaining === 0) return `${report.service} has no dead letters`;
  return [`${report.service} has ${plural(report.remaining, 'dead letter')}; a redrive would move ${report.moved}${report.moved > 0 ? ` (${counts(report.by_type)})` : ''} and keep ${report.kept}`, ...redriveSummary(report).split('\n').slice(1)].join('\n');
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--max must be a positive whole number, got "${value}"`);
  return n;
}

export function registerBusCommands(program: Command, conn: () => AdminConnection): void {
  const bus = program.command('bus').description("the message bus: a service's dead letters (ask a process that runs the service's consumers)");
  bus
    .command('redrive')
    .description("move a service's dead letters back to its own queue (failure count reset, same ids), after fixing what made them fail")
    .requiredOption('--service <name>', 'the service whose dead-letter queue to redrive')
    .option('--dry-run', 'only say what would move; move nothing')
    .option('--max <n>', 'move at most this many (oldest first; default 10000)', positiveInt)
    .option('--json', 'print the admin API\'s answer as JSON')
    .action(async (opts: { service: string; dryRun?: boolean; max?: number; json?: boolean }) => {
      const report = await redriveDeadLetters(conn(), { service: opts.service, dryRun: Boolean(opts.dryRun), ...(opts.max !== undefined ? { max: opts.max } : {}) });
      process.stdout.write(`${opts.json ? JSON.stringify(report, null, 2) : redriveSummary(report)}\n`);
    });
  bus
    .command('dead-letters')
    .description("count a service's dead letters by type and reason (a dry run of a redrive)")
    .requiredOption('--service <name>', 'the service whose dead-letter queue to look at')
    .option('--json', 'print the admin API\'s answer as JSON')
    .action(async (opts: { service: string; json?: boolean }) => {
      const report = await deadLetterCounts(conn(), opts.service);
      process.stdout.write(`${opts.json ? JSON.stringify(report, null, 2) : deadLettersSummary(report)}\n`);
    });
}
