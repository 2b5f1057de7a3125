// Progress of an import: a bar on a terminal (cli-progress), a plain line every few seconds
// elsewhere (CI logs, pipes). Both read the importer's counters on a timer, so the import loop
// only counts.
import { Presets, SingleBar } from 'cli-progress';

export interface ImportCounters {
  bytesRead: number;
  totalBytes: number;
  /** Data rows read from the file (header excluded), accepted or not. */
  rows: number;
  accepted: number;
  rejected: number;
}

export interface ProgressOptions {
  /** Draw a bar (a terminal) or print plain lines. */
  tty: boolean;
  stream: NodeJS.WritableStream;
  /** Between plain lines; default 5 s. */
  intervalMs?: number;
}

export interface ProgressReporter {
  stop(): void;
}

function seconds(value: number): string {
  if (!Number.isFinite(value)) return '?';
  if (value < 60) return `${Math.ceil(value)} s`;
  return `${Math.floor(value / 60)} min ${Math.ceil(value % 60)} s`;
}

/**
 * Rows settled (accepted or rejected) per second, and seconds left. Reading runs up to two batches
 * ahead of the server, so the share of the work done is the share of the file read, scaled by the
 * share of the rows read that are settled.
 */
export function rates(counters: ImportCounters, elapsedMs: number): { rowsPerSecond: number; etaSeconds: number; percent: number } {
  const elapsed = Math.max(elapsedMs, 1) / 1000;
  const read = counters.totalBytes > 0 ? Math.min(counters.bytesRead / counters.totalBytes, 1) : 1;
  const settled = counters.accepted + counters.rejected;
  const done = counters.rows > 0 ? read * Math.min(settled / counters.rows, 1) : 0;
  return {
    rowsPerSecond: settled / elapsed,
    etaSeconds: done > 0 ? (elapsed * (1 - done)) / done : Number.POSITIVE_INFINITY,
    percent: Math.floor(read * 100),
  };
}

export function progressLine(label: string, counters: ImportCounters, elapsedMs: number): string {
  const r = rates(counters, elapsedMs);
  return `${label}: ${r.percent}% read, ${counters.rows} rows (${counters.accepted} accepted, ${counters.rejected} rejected), ` +
    `${Math.round(r.rowsPerSecond)} rows/s, ETA ${seconds(r.etaSeconds)}\n`;
}

export function startProgress(label: string, counters: () => ImportCounters, options: ProgressOptions): ProgressReporter {
  const started = Date.now();
  if (options.tty) {
    const bar = new SingleBar(
      { format: ` ${label} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | ETA {eta_text} | {rejected} rejected`, hideCursor: true, stream: options.stream as NodeJS.WriteStream },
      Presets.shades_classic,
    );
    const payload = () => {
      const c = counters();
      const r = rates(c, Date.now() - started);
      return { value: c.bytesRead, data: { rows: c.rows, rate: Math.round(r.rowsPerSecond), eta_text: seconds(r.etaSeconds), rejected: c.rejected } };
    };
    const first = payload();
    bar.start(Math.max(counters().totalBytes, 1), first.value, first.data);
    const timer = setInterval(() => {
      const next = payload();
      bar.update(next.value, next.data);
    }, 200);
    return {
      stop() {
        clearInterval(timer);
        const last = payload();
        bar.update(last.value, last.data);
        bar.stop();
      },
    };
  }
  const timer = setInterval(() => options.stream.write(progressLine(label, counters(), Date.now() - started)), options.intervalMs ?? 5000);
  return {
    stop() {
      clearInterval(timer);
      options.stream.write(progressLine(label, counters(), Date.now() - started));
    },
  };
}
