// Following an admin job (a read-model rebuild) to its end: polls it, draws a bar per phase on a
// terminal or prints a plain line every 5 s elsewhere, then prints the final line and throws if it
// failed. The commands only say how a job reads.
import { Presets, SingleBar } from 'cli-progress';
import { adminRequest, type AdminConnection } from './admin-client';

/** What every admin job reports. */
export interface AdminJob {
  id: string;
  status: 'running' | 'done' | 'failed';
  done: number;
  total: number;
  seconds: number;
}

export interface FollowOptions<J extends AdminJob> {
  /** The collection the job lives in, e.g. `/funnels/rebuilds`. */
  path: string;
  /** One line of progress or outcome (logs, pipes, the last line). */
  line: (job: J) => string;
  /** The bar's label for the job's current phase; null while nothing countable runs yet. */
  phase: (job: J) => string | null;
  tty: boolean;
  stream: NodeJS.WritableStream;
  pollMs?: number;
}

export async function followJob<J extends AdminJob>(conn: AdminConnection, started: J, opts: FollowOptions<J>): Promise<J> {
  const bar = opts.tty
    ? new SingleBar({ format: ' {phase} [{bar}] {percentage}% | {value}/{total} | {seconds} s', hideCursor: true, stream: opts.stream as NodeJS.WriteStream }, Presets.shades_classic)
    : null;
  let drawn: string | null = null;
  let lastLine = 0;
  const show = (job: J): void => {
    if (!bar) {
      if (Date.now() - lastLine >= 5000) {
        lastLine = Date.now();
        opts.stream.write(`${opts.line(job)}\n`);
      }
      return;
    }
    const phase = opts.phase(job);
    if (phase === null) return;
    if (phase !== drawn) {
      if (drawn !== null) bar.stop();
      drawn = phase;
      bar.start(Math.max(1, job.total), job.done, { phase, seconds: job.seconds.toFixed(0) });
    } else {
      bar.setTotal(Math.max(1, job.total));
      bar.update(job.done, { seconds: job.seconds.toFixed(0) });
    }
  };
  let job = started;
  while (job.status === 'running') {
    show(job);
    await new Promise((resolve) => setTimeout(resolve, opts.pollMs ?? 500));
    job = await adminRequest<J>(conn, 'GET', `${opts.path}/${encodeURIComponent(job.id)}`);
  }
  if (bar && drawn !== null) {
    bar.update(job.total, { seconds: job.seconds.toFixed(0) });
    bar.stop();
  }
  opts.stream.write(`${opts.line(job)}\n`);
  if (job.status === 'failed') throw new Error(opts.line(job));
  return job;
}
