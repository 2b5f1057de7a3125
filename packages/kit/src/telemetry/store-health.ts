// Whether the store servers a process uses answer, for /readyz: one cheap round trip per store
// (SELECT 1, or a key read), each bounded by a timeout, and the answer kept for a moment so that
// probes every few seconds do not turn into load on the stores. Embedded stores live in the process
// itself and are not pinged: if they failed, the process would.
import type { ClickHouseStore, KvStore, SqlStore } from '../stores/types';
import { withTimeout } from './metric-families';

export interface StoreHealthOptions {
  /** How long one answer is reused. Default 2 000 ms. */
  cacheMs?: number;
  /** A ping slower than this counts as down. Default 1 000 ms. */
  timeoutMs?: number;
}

export interface StoreHealth {
  /** Pings the store when its driver talks to a server; the same name twice is kept once. */
  watch(name: string, store: SqlStore | ClickHouseStore | KvStore): void;
  /** One line per store that did not answer, e.g. "postgres (schema contacts): connection refused". */
  problems(): Promise<string[]>;
}

const SERVER_DRIVERS = new Set(['postgres', 'clickhouse', 'redis']);
const PING_KEY = 'sightline:readyz-ping';

function pingOf(store: SqlStore | ClickHouseStore | KvStore): (() => Promise<unknown>) | null {
  if (!SERVER_DRIVERS.has(store.driver)) return null;
  if (store.driver === 'redis') return () => (store as KvStore).get(PING_KEY);
  if (store.driver === 'clickhouse') return () => (store as ClickHouseStore).query('SELECT 1 AS ok');
  return () => (store as SqlStore).query('SELECT 1 AS ok');
}

export function storeHealth(options: StoreHealthOptions = {}): StoreHealth {
  const cacheMs = options.cacheMs ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 1_000;
  const pings = new Map<string, () => Promise<unknown>>();
  let last: { at: number; problems: Promise<string[]> } | null = null;

  const check = async (): Promise<string[]> => {
    const results = await Promise.all(
      [...pings].map(async ([name, ping]) => {
        try {
          await withTimeout(ping(), timeoutMs, 'the ping');
          return null;
        } catch (error) {
          return `${name}: ${error instanceof Error ? error.message : String(error)}`;
        }
      }),
    );
    return results.filter((r): r is string => r !== null);
  };

  return {
    watch(name, store) {
      const ping = pingOf(store);
      if (ping && !pings.has(name)) pings.set(name, ping);
    },
    problems() {
      if (pings.size === 0) return Promise.resolve([]);
      const now = Date.now();
      if (!last || now - last.at >= cacheMs) last = { at: now, problems: check() };
      return last.problems;
    },
  };
}
