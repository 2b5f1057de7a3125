// Every ClickHouse statement runs under a time and memory limit chosen by its role: reads (what
// API requests and alerts ask: `query`) get a short leash, writes (inserts, rebuilds, DDL:
// `insert`, `command`) a long one. Without them one expensive read could hold a server's cores and
// memory for minutes while every other tenant waits. 0 means no limit, as in ClickHouse.
import { ProblemError } from '../errors';

export interface ClickHouseRoleLimits {
  /** ClickHouse max_execution_time, seconds. */
  maxExecutionSeconds: number;
  /** ClickHouse max_memory_usage, bytes. */
  maxMemoryBytes: number;
}

export interface ClickHouseLimits {
  read: ClickHouseRoleLimits;
  write: ClickHouseRoleLimits;
}

const GIB = 1024 ** 3;

export const CLICKHOUSE_LIMIT_DEFAULTS: ClickHouseLimits = {
  read: { maxExecutionSeconds: 60, maxMemoryBytes: 4 * GIB },
  write: { maxExecutionSeconds: 1800, maxMemoryBytes: 8 * GIB },
};

/** The settings that apply a role's limits. */
export function limitSettings(limits: ClickHouseRoleLimits): { max_execution_time: number; max_memory_usage: number } {
  return { max_execution_time: limits.maxExecutionSeconds, max_memory_usage: limits.maxMemoryBytes };
}

// ClickHouse error codes (server and chDB report the same ones): TIMEOUT_EXCEEDED, TOO_SLOW
// (estimated to exceed the time), MEMORY_LIMIT_EXCEEDED.
const TIME_CODES = new Set(['159', '160']);
const MEMORY_CODES = new Set(['241']);

function limitHit(error: unknown): 'time' | 'memory' | null {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  const message = error instanceof Error ? error.message : String(error);
  const coded = /Code:\s*(\d+)/.exec(message)?.[1] ?? code;
  if (TIME_CODES.has(coded) || /\b(TIMEOUT_EXCEEDED|TOO_SLOW)\b/.test(message)) return 'time';
  if (MEMORY_CODES.has(coded) || /\bMEMORY_LIMIT_EXCEEDED\b/.test(message)) return 'memory';
  return null;
}

/**
 * A read stopped by its limit becomes the problem a caller can act on (a smaller question), not an
 * internal error; anything else is returned as it was.
 */
export function readLimitProblem(error: unknown, limits: ClickHouseRoleLimits): unknown {
  const hit = limitHit(error);
  if (hit === null) return error;
  const what = hit === 'time'
    ? `more than the ${limits.maxExecutionSeconds} s an analytics query may run`
    : `more than the ${Math.round(limits.maxMemoryBytes / 1024 ** 2)} MiB of memory an analytics query may use`;
  return new ProblemError('window-too-large', {
    detail: `Answering this would take ${what}.`,
    remediation: 'Ask a smaller question: a shorter period, fewer group_by dimensions or models, or a narrower filter. (Operators set the limits with SIGHTLINE_CLICKHOUSE_READ_MAX_SECONDS and SIGHTLINE_CLICKHOUSE_READ_MAX_MEMORY_MB.)',
  });
}
