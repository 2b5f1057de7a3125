// Counters for the ad-platform connectors, callable from anywhere in crm-sync without threading the
// registry through: the module binds its registry at create (bindAdMetrics); until then, and in
// unit tests that never create the module, recordAdPull / recordAdPush do nothing.
// - sightline_crm_sync_ad_pull_rows_total{platform}: spend rows upserted by API pulls;
// - sightline_crm_sync_ad_push_total{platform, outcome}: conversion uploads by how they ended, with
//   the write-back queue's own words (done: accepted or already there; failed: retry scheduled;
//   dead: refused or given up; skipped: nothing to send, e.g. no identifier or consent denied), and
//   for Google's asynchronous follow-up (writeback/google-request-status.ts) confirmed: Google took
//   the events; rejected: Google refused some of them later (the rest stay sent).
import { counterOf, type ModuleContext } from '@sightline/kit';
import type { Counter } from 'prom-client';
import type { AdConnectionPlatform } from '../writeback/connection';

type Registry = ModuleContext['metrics'];

export type AdPushOutcome = 'done' | 'failed' | 'dead' | 'skipped' | 'confirmed' | 'rejected';
export const AD_PUSH_OUTCOMES: readonly AdPushOutcome[] = ['done', 'failed', 'dead', 'skipped', 'confirmed', 'rejected'];

export const AD_PULL_ROWS_METRIC = 'sightline_crm_sync_ad_pull_rows_total';
export const AD_PUSH_METRIC = 'sightline_crm_sync_ad_push_total';

let pullRows: Counter<'platform'> | null = null;
let pushes: Counter<'platform' | 'outcome'> | null = null;

/** Registers both counters on the module's registry (idempotent: the same names are got, not re-created). */
export function bindAdMetrics(registry: Registry): void {
  pullRows = counterOf(registry, AD_PULL_ROWS_METRIC, 'Ad spend rows upserted by API pulls, by platform.', ['platform'] as const);
  pushes = counterOf(registry, AD_PUSH_METRIC, 'Conversion uploads to ad platforms by platform and outcome (done, failed, dead, skipped).', ['platform', 'outcome'] as const);
}

/** Counts `rows` spend rows pulled from `platform` (0 or less counts nothing). */
export function recordAdPull(platform: AdConnectionPlatform, rows: number): void {
  if (pullRows && Number.isFinite(rows) && rows > 0) pullRows.inc({ platform }, rows);
}

/** Counts one conversion upload to `platform` that ended as `outcome`. */
export function recordAdPush(platform: AdConnectionPlatform, outcome: AdPushOutcome): void {
  pushes?.inc({ platform, outcome });
}
