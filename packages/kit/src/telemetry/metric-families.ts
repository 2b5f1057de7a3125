// Metric families shared by every module of a process. Several parts of one process (two bus
// clients, every module's stores) report into the same family of one registry, so families are
// got-or-created by name: registering a name twice would throw.
//
// Names follow `sightline_<service or part>_<thing>_<unit>` in base units; every label takes its
// values from a fixed set (service names, catalog methods and types, store drivers, outcomes).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Buckets for request-like work (RPC, message handling, store queries), in seconds. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function counterOf<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

export function histogramOf<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[], buckets: number[] = LATENCY_BUCKETS): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

export interface Sample<L extends string> {
  labels: Record<L, string>;
  value: number;
}

/** Something a polled gauge reads when scraped: one or more samples, or a promise of them. */
export type GaugeSource<L extends string> = () => Sample<L>[] | Promise<Sample<L>[]>;

export interface PolledGauge<L extends string> {
  /** Adds a source; the returned function removes it (and its series). */
  add(source: GaugeSource<L>): () => void;
}

export interface PolledGaugeOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** A source that has not answered within this long is left out of the scrape. Default 1 000 ms. */
  timeoutMs?: number;
}

const polledGauges = new WeakMap<Registry, Map<string, PolledGauge<string>>>();

/**
 * A gauge whose value is read from its sources when Prometheus scrapes (queue depths, backlogs, cache
 * sizes). A source that fails or is slow is left out of that scrape rather than holding it up or
 * reporting a stale number; sources that are costly to read memoize themselves (memoizeFor).
 */
export function polledGauge<L extends string>(registry: Registry, options: PolledGaugeOptions<L>): PolledGauge<L> {
  let byName = polledGauges.get(registry);
  if (!byName) {
    byName = new Map();
    polledGauges.set(registry, byName);
  }
  const known = byName.get(options.name);
  if (known) return known as PolledGauge<L>;

  const sources = new Set<GaugeSource<L>>();
  const timeoutMs = options.timeoutMs ?? 1_000;
  new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers: [registry],
    async collect() {
      const read = await Promise.all([...sources].map((source) => withTimeout(Promise.resolve().then(source), timeoutMs).catch(() => [] as Sample<L>[])));
      this.reset();
      for (const sample of read.flat()) this.set(sample.labels, sample.value);
    },
  });
  const gauge: PolledGauge<L> = {
    add(source) {
      sources.add(source);
      return () => void sources.delete(source);
    },
  };
  byName.set(options.name, gauge as PolledGauge<string>);
  return gauge;
}

/** Reads through `read` at most once per `ms`; concurrent callers share the read in flight. */
export function memoizeFor<T>(ms: number, read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    const now = Date.now();
    if (last && now - last.at < ms) return last.value;
    const value = read();
    last = { at: now, value };
    // A failed read is not kept: the next scrape tries again.
    value.catch(() => {
      if (last?.value === value) last = null;
    });
    return value;
  };
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export interface CacheSizeOptions {
  /** The owning service (a label value from the fixed set of service names). */
  service: string;
  /** The cache's name within the service: a fixed word such as `site_ids`. */
  cache: string;
  /** Entries held now. */
  size: () => number;
}

/**
 * Exports a bounded cache's size as `sightline_cache_entries{service, cache}`, read when scraped.
 * Returns a function that stops reporting it (for caches that live shorter than the process).
 */
export function registerCacheSize(registry: Registry, options: CacheSizeOptions): () => void {
  const gauge = polledGauge(registry, {
    name: 'sightline_cache_entries',
    help: 'Entries held by a bounded in-process cache, by service and cache.',
    labelNames: ['service', 'cache'] as const,
  });
  return gauge.add(() => [{ labels: { service: options.service, cache: options.cache }, value: options.size() }]);
}
