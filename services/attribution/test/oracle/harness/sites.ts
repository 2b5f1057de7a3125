// The seeds and windows the differential suite covers, and each loaded site's oracle dataset.
import { buildDataset, DAY_MS, type OracleDataset, type OracleWindow } from '../index';
import { oracleEventOf } from './oracle-input';
import type { LoadedSite, SeedSpec } from './process';

const END = new Date('2025-03-01T00:00:00.000Z');

/**
 * 26 small workspaces: 40 to 120 visitors over 30, 45 or 60 days. (datagen's return visits come
 * within 40 days, so no journey reaches the 90-day lookback: the property tests cover that.)
 */
export const SEED_SPECS: readonly SeedSpec[] = Array.from({ length: 26 }, (_, i): SeedSpec => ({
  seed: 9001 + i * 7, days: [30, 45, 60][i % 3] as number, visitors: 40 + ((i * 37) % 81), endDate: END,
}));

export interface NamedWindow extends OracleWindow {
  name: 'full' | 'last_30_days' | 'mid_range';
  from: string;
  to: string;
}

/** The whole range, its last 30 days, and its middle third with boundaries off the hour. */
export function windowsOf(site: LoadedSite): NamedWindow[] {
  const third = Math.floor(site.spec.days / 3) * DAY_MS;
  const make = (name: NamedWindow['name'], fromMs: number, toMs: number): NamedWindow => ({
    name, fromMs, toMs, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(),
  });
  return [
    make('full', site.startMs, site.endMs),
    make('last_30_days', site.endMs - 30 * DAY_MS, site.endMs),
    make('mid_range', site.startMs + third + 7 * 3_600_000 + 13 * 60_000, site.startMs + 2 * third + 13 * 3_600_000 + 47 * 60_000),
  ];
}

export interface OracleSite {
  site: LoadedSite;
  data: OracleDataset;
  windows: NamedWindow[];
}

export function oracleSiteOf(site: LoadedSite): OracleSite {
  return { site, data: buildDataset(site.events.map(oracleEventOf)), windows: windowsOf(site) };
}

/** Runs `fn` over `items`, `parallel` at a time, results in input order. */
export async function mapLimit<T, R>(items: readonly T[], parallel: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return results;
}
