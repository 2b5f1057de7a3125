// Operator routes (admin port, admin token): the write-back queue, its dead letters and their
// retry, and the ad-platform accounts uploads go to (credentials sealed, never returned).
//   GET    /admin/crm/writebacks?status=dead&website_id=&conversion_id=&limit=
//   GET    /admin/crm/writebacks/:id
//   POST   /admin/crm/writebacks/:id/retry
//   GET    /admin/crm/ad-destinations?website_id=   (with each account's status: pulls, pushes, versions; the last
//          rejection is a dead upload's reason or one the platform reported later, e.g. Google's request status)
//   PUT    /admin/crm/ad-destinations/:website_id/:platform   {workspace_id, credentials, settings, api_version?}
//          (settings without the platform's conversion setting: a spend-only account, shown with spend_only true)
//   DELETE /admin/crm/ad-destinations/:website_id/:platform
import { adminRoute, ProblemError, type ModuleInstance, type Outbox, type SqlStore } from '@sightline/kit';
import type { WritebackStatus } from '@sightline/proto-schemas';
import type { CredentialsBox } from '../connections/credentials';
import type { Credentials } from '../connectors/connector';
import { API_VERSIONS, apiVersion, PLATFORM_API, versionProblem } from '../api-versions';
import { AD_PLATFORMS, adDestinationKey, type AdConnectionPlatform, type AdPlatform } from './connection';
import { conversionsConfigured, SettingsError } from './conversion';
import { adAccountSettings } from './plan';
import { statusMessage } from './status';
import { getRow, listRows, requeueRow, type WritebackRow } from './store';

type AdminRouter = Parameters<NonNullable<ModuleInstance['adminRoutes']>>[0];

export interface WritebackAdminDeps {
  sql: SqlStore;
  outbox: Outbox<'crm-sync'>;
  box: CredentialsBox;
  now: () => Date;
  /** Starts a queue round after a retry. */
  kick: () => void;
}

const STATUSES: readonly WritebackStatus[] = ['pending', 'done', 'failed', 'dead', 'skipped'];
const RETRYABLE_STATUSES: readonly WritebackStatus[] = ['dead', 'failed'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function present(row: WritebackRow, withPayload: boolean) {
  return {
    id: row.id,
    request_id: row.request_id,
    target: row.target,
    provider: row.provider,
    workspace_id: row.workspace_id,
    website_id: row.website_id,
    conversion_id: row.conversion_id,
    requested_by: row.requested_by,
    requested_at: row.requested_at.toISOString(),
    status: row.status,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    last_error: row.last_error,
    detail: row.detail,
    external_id: row.external_id,
    updated_at: row.updated_at.toISOString(),
    ...(withPayload ? { payload: row.payload } : {}),
  };
}

const noSuchWriteback = (): ProblemError => new ProblemError('not-found', { detail: 'No such write-back.', remediation: 'List them with GET /admin/crm/writebacks (or `sightline`).' });

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function writebackAdminRoutes(router: AdminRouter, deps: WritebackAdminDeps): void {
  router.get('/crm/writebacks', adminRoute(async (req) => {
    const status = text(req.query['status']);
    if (status !== undefined && !STATUSES.includes(status as WritebackStatus)) {
      throw new ProblemError('invalid-request', { detail: `Unknown write-back status "${status}".`, remediation: 'Use one of the allowed statuses.', allowed: STATUSES });
    }
    const conversionId = text(req.query['conversion_id']);
    if (conversionId !== undefined && !UUID.test(conversionId)) {
      throw new ProblemError('invalid-request', { detail: 'conversion_id must be a UUID.', remediation: 'Send the contact id as GET /v1/contacts shows it.' });
    }
    const limit = Math.min(500, Math.max(1, Number(text(req.query['limit']) ?? 100) || 100));
    const rows = await listRows(deps.sql, { status: status as WritebackStatus | undefined, websiteId: text(req.query['website_id']), conversionId, limit });
    return { status: 200, body: { data: rows.map((r) => present(r, false)) } };
  }));

  router.get('/crm/writebacks/:id', adminRoute(async (req) => {
    const row = UUID.test(String(req.params['id'])) ? await getRow(deps.sql, String(req.params['id'])) : null;
    if (!row) throw noSuchWriteback();
    return { status: 200, body: { data: present(row, true) } };
  }));

  router.post('/crm/writebacks/:id/retry', adminRoute(async (req) => {
    const id = String(req.params['id']);
    if (!UUID.test(id)) throw noSuchWriteback();
    const requeued = await deps.sql.transaction(async (tx) => {
      const row = await getRow(tx, id, true);
      if (!row) throw noSuchWriteback();
      if (!RETRYABLE_STATUSES.includes(row.status)) {
        throw new ProblemError('conflict', { detail: `Only a dead or failed write-back can be retried; this one is ${row.status}.`, remediation: 'Retry it once it is dead or failed, or leave it: it is still being worked on.' });
      }
      const updated = await requeueRow(tx, id, deps.now());
      await deps.outbox.add(tx, statusMessage(updated));
      return updated;
    });
    deps.outbox.wake();
    deps.kick();
    return { status: 200, body: { data: present(requeued, false) } };
  }));

  router.get('/crm/ad-destinations', (req, res, next) => {
    const websiteId = text(req.query['website_id']);
    deps.sql
      .query<AdDestinationStatusRow>(
        `SELECT d.website_id, d.platform, d.workspace_id, d.settings, d.status, d.updated_at, d.api_version,
                d.last_pull_at, d.last_pull_rows, d.last_pull_error, d.last_pull_error_at, d.next_pull_at,
                greatest(d.last_push_at, w.last_done_at) AS last_push_at, w.pushes_done, w.pushes_waiting, w.pushes_dead,
                w.next_retry_at, r.detail AS last_rejection, r.updated_at AS last_rejection_at
           FROM ad_destinations d
           LEFT JOIN LATERAL (
             SELECT max(updated_at) FILTER (WHERE status = 'done') AS last_done_at,
                    count(*) FILTER (WHERE status = 'done')::int AS pushes_done,
                    count(*) FILTER (WHERE status IN ('pending', 'failed'))::int AS pushes_waiting,
                    count(*) FILTER (WHERE status = 'dead')::int AS pushes_dead,
                    min(next_attempt_at) FILTER (WHERE status IN ('pending', 'failed')) AS next_retry_at
               FROM writebacks WHERE website_id = d.website_id AND target = d.platform
           ) w ON true
           LEFT JOIN LATERAL (
             SELECT coalesce(last_error, detail) AS detail, updated_at FROM writebacks
              WHERE website_id = d.website_id AND target = d.platform
                AND (status = 'dead' OR (status = 'done' AND last_error IS NOT NULL)) ORDER BY updated_at DESC LIMIT 1
           ) r ON true
         ${websiteId ? 'WHERE d.website_id = $1' : ''} ORDER BY d.website_id, d.platform`,
        websiteId ? [websiteId] : [],
      )
      .then((result) => res.json({ data: result.rows.map(presentDestination) }), next);
  });

  router.put('/crm/ad-destinations/:websiteId/:platform', (req, res, next) => {
    const { websiteId, platform } = req.params;
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!AD_PLATFORMS.includes(platform as AdConnectionPlatform)) {
      return next(new ProblemError('invalid-request', { detail: `Unknown ad platform "${platform}".`, remediation: 'Use one of the allowed platforms in the path.', allowed: AD_PLATFORMS }));
    }
    const problem = checkDestination(platform, body);
    if (problem !== null) return next(new ProblemError('invalid-request', { detail: problem, remediation: 'Fix the destination as the message says and send it again.' }));
    const sealed = deps.box.seal(adDestinationKey(websiteId, platform as AdPlatform), body['credentials'] as Credentials);
    const pinned = typeof body['api_version'] === 'string' && body['api_version'].trim() !== '' ? body['api_version'].trim() : null;
    deps.sql
      .query(
        `INSERT INTO ad_destinations (website_id, platform, workspace_id, credentials, settings, status, api_version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, 'active', $7, $6, $6)
         ON CONFLICT (website_id, platform) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, credentials = EXCLUDED.credentials,
           settings = EXCLUDED.settings, status = 'active', api_version = EXCLUDED.api_version, updated_at = EXCLUDED.updated_at`,
        [websiteId, platform, body['workspace_id'], sealed, JSON.stringify(body['settings']), deps.now(), pinned],
      )
      .then(() => res.json({
        data: {
          website_id: websiteId, platform, workspace_id: body['workspace_id'], settings: body['settings'], status: 'active',
          api_version: pinned, api_version_in_use: apiVersion(PLATFORM_API[platform as AdConnectionPlatform], pinned),
          spend_only: !conversionsConfigured(platform as AdConnectionPlatform, body['settings']),
        },
      }), next);
  });

  router.delete('/crm/ad-destinations/:websiteId/:platform', (req, res, next) => {
    deps.sql
      .query('DELETE FROM ad_destinations WHERE website_id = $1 AND platform = $2', [req.params.websiteId, req.params.platform])
      .then((result) => (result.rowCount > 0 ? res.status(204).end() : next(new ProblemError('not-found', { detail: 'No such ad destination.', remediation: 'List them with GET /admin/crm/ad-destinations.' }))), next);
  });
}

/** Credentials each platform cannot work without (Google's developer token is optional: the Data Manager API does without it). */
const REQUIRED_CREDENTIALS: Record<AdConnectionPlatform, string[]> = { google_ads: ['access_token'], meta_ads: ['access_token'], linkedin_ads: ['access_token'] };

/** Why a destination body is unusable, or null when it is fine. */
function checkDestination(platform: string, body: Record<string, unknown>): string | null {
  if (!AD_PLATFORMS.includes(platform as AdConnectionPlatform)) return `platform must be one of ${AD_PLATFORMS.join(', ')}`;
  if (typeof body['workspace_id'] !== 'string' || body['workspace_id'] === '') return 'workspace_id is required';
  const credentials = body['credentials'];
  const required = REQUIRED_CREDENTIALS[platform as AdConnectionPlatform];
  if (typeof credentials !== 'object' || credentials === null || Array.isArray(credentials)
    || !Object.values(credentials).every((v) => typeof v === 'string')
    || !required.every((k) => typeof (credentials as Record<string, unknown>)[k] === 'string')) {
    return `credentials must be an object of strings with ${required.join(' and ')}`;
  }
  const pinned = body['api_version'];
  if (pinned !== undefined && pinned !== null) {
    if (typeof pinned !== 'string') return 'api_version must be a string (or null for the default)';
    const problem = pinned.trim() === '' ? null : versionProblem(PLATFORM_API[platform as AdConnectionPlatform], pinned.trim());
    if (problem !== null) return problem;
  }
  try {
    // Without its platform's conversion setting the account is spend only; what is given is checked all the same.
    adAccountSettings(platform as AdPlatform, body['settings']);
  } catch (error) {
    if (error instanceof SettingsError) return error.message;
    throw error;
  }
  return null;
}

interface AdDestinationStatusRow {
  website_id: string;
  platform: AdConnectionPlatform;
  workspace_id: string;
  settings: unknown;
  status: string;
  updated_at: Date;
  api_version: string | null;
  last_pull_at: Date | null;
  last_pull_rows: number | null;
  last_pull_error: string | null;
  last_pull_error_at: Date | null;
  next_pull_at: Date | null;
  last_push_at: Date | null;
  pushes_done: number | null;
  pushes_waiting: number | null;
  pushes_dead: number | null;
  next_retry_at: Date | null;
  last_rejection: string | null;
  last_rejection_at: Date | null;
}

const iso = (value: Date | null): string | null => value?.toISOString() ?? null;

/** One account as the admin API shows it: settings (never credentials), versions and status. */
function presentDestination(r: AdDestinationStatusRow) {
  const api = PLATFORM_API[r.platform];
  return {
    website_id: r.website_id,
    platform: r.platform,
    workspace_id: r.workspace_id,
    settings: r.settings,
    status: r.status,
    /** No conversion setting (conversion_action_id, pixel_id, conversion_rule_id): spend is pulled, no conversion is sent. */
    spend_only: !conversionsConfigured(r.platform, r.settings),
    updated_at: r.updated_at.toISOString(),
    api: api,
    api_version: r.api_version,
    api_version_in_use: apiVersion(api, r.api_version),
    api_version_sunset: r.api_version === null || r.api_version === API_VERSIONS[api].version ? API_VERSIONS[api].sunset : null,
    last_pull_at: iso(r.last_pull_at),
    last_pull_rows: r.last_pull_rows,
    last_pull_error: r.last_pull_error,
    last_pull_error_at: iso(r.last_pull_error_at),
    next_pull_at: iso(r.next_pull_at),
    last_push_at: iso(r.last_push_at),
    pushes: { done: r.pushes_done ?? 0, waiting: r.pushes_waiting ?? 0, dead: r.pushes_dead ?? 0 },
    next_retry_at: iso(r.next_retry_at),
    last_rejection: r.last_rejection,
    last_rejection_at: iso(r.last_rejection_at),
  };
}
