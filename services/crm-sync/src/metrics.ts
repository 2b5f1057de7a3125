// crm-sync's health as metrics, read from its own tables when Prometheus scrapes (at most every
// READ_EVERY_MS, so scrapes never turn into load):
// - sightline_crm_sync_connections{provider, health}: connections by health (ok, failing,
//   never_synced, disconnected; the same rule the admin API's connection view applies);
// - sightline_crm_sync_writebacks{target, status}: the write-back queue by destination (crm,
//   google_ads, meta_ads, linkedin_ads) and open state (pending, failed: retry scheduled, dead: given up);
// - sightline_crm_sync_api_sunset_days{api, version}: days until each default ad-platform API
//   version's sunset (src/api-versions.ts; negative once past), for an alert well ahead of it;
// - sightline_crm_sync_ad_pull_rows_total{platform} and sightline_crm_sync_ad_push_total{platform,
//   outcome}: counted where pulls and uploads happen (ads/ad-metrics.ts), bound to this registry here.
// Every replica reports the same rows: dashboards take the max.
import { memoizeFor, polledGauge, type ModuleContext, type SqlStore } from '@sightline/kit';
import { bindAdMetrics } from './ads/ad-metrics';
import { PROVIDER_APIS, API_VERSIONS, daysUntil } from './api-versions';

type Registry = ModuleContext['metrics'];

const READ_EVERY_MS = 15_000;
const HEALTHS = ['ok', 'failing', 'never_synced', 'disconnected'] as const;
const TARGETS = ['crm', 'google_ads', 'meta_ads', 'linkedin_ads'] as const;
/** Done and skipped rows only grow; the queue's open states are what an operator acts on. */
const OPEN_STATUSES = ['pending', 'failed', 'dead'] as const;

export function registerCrmSyncMetrics(registry: Registry, sql: SqlStore, now: () => Date = () => new Date()): void {
  bindAdMetrics(registry);
  polledGauge(registry, {
    name: 'sightline_crm_sync_api_sunset_days',
    help: 'Days until the sunset of each default ad-platform API version crm-sync calls (negative once past).',
    labelNames: ['api', 'version'] as const,
  }).add(() => PROVIDER_APIS.map((api) => ({ labels: { api, version: API_VERSIONS[api].version }, value: daysUntil(API_VERSIONS[api].sunset, now()) })));

  const connections = memoizeFor(READ_EVERY_MS, async () =>
    (
      await sql.query<{ provider: string; health: string; n: number }>(
        `SELECT provider,
                CASE WHEN status = 'disconnected' THEN 'disconnected'
                     WHEN last_error_at IS NOT NULL AND (last_success_at IS NULL OR last_error_at > last_success_at) THEN 'failing'
                     WHEN last_success_at IS NOT NULL THEN 'ok'
                     ELSE 'never_synced' END AS health,
                count(*)::int AS n
           FROM connections GROUP BY 1, 2`,
      )
    ).rows,
  );
  polledGauge(registry, {
    name: 'sightline_crm_sync_connections',
    help: 'CRM connections by provider and health (ok, failing, never_synced, disconnected).',
    labelNames: ['provider', 'health'] as const,
  }).add(async () => {
    const rows = await connections();
    const providers = [...new Set(rows.map((r) => r.provider))];
    return providers.flatMap((provider) =>
      HEALTHS.map((health) => ({ labels: { provider, health }, value: rows.find((r) => r.provider === provider && r.health === health)?.n ?? 0 })),
    );
  });

  const writebacks = memoizeFor(READ_EVERY_MS, async () =>
    (await sql.query<{ target: string; status: string; n: number }>(`SELECT target, status, count(*)::int AS n FROM writebacks WHERE status = ANY($1::text[]) GROUP BY 1, 2`, [[...OPEN_STATUSES]])).rows,
  );
  polledGauge(registry, {
    name: 'sightline_crm_sync_writebacks',
    help: 'Outcome write-backs by target (crm, google_ads, meta_ads, linkedin_ads) and open status (pending, failed: retry scheduled, dead: given up).',
    labelNames: ['target', 'status'] as const,
  }).add(async () => {
    const rows = await writebacks();
    return TARGETS.flatMap((target) => OPEN_STATUSES.map((status) => ({ labels: { target, status }, value: rows.find((r) => r.target === target && r.status === status)?.n ?? 0 })));
  });
}
