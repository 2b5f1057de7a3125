// Operator routes (admin port, admin token): the write-back queue, its dead letters and their
// retry, and the ad-platform accounts uploads go to (credentials sealed, never returned).
//   GET    /admin/crm/writebacks?status=dead&website_id=&conversion_id=&limit=
//   GET    /admin/crm/writebacks/:id
//   POST   /admin/crm/writebacks/:id/retry
//   GET    /admin/crm/ad-destinations?website_id=
//   PUT    /admin/crm/ad-destinations/:website_id/:platform   {workspace_id, credentials, settings}
//   DELETE /admin/crm/ad-destinations/:website_id/:platform
import { adminRoute, ProblemError, type ModuleInstance, type Outbox, type SqlStore } from '@sightline/kit';
import type { WritebackStatus } from '@sightline/proto-schemas';
import type { CredentialsBox } from '../connections/credentials';
import type { Credentials } from '../connectors/connector';
import { AD_PLATFORMS, adDestinationKey, type AdPlatform } from './connection';
import { SettingsError } from './conversion';
import { parseGoogleAdsSettings } from './google-ads';
import { parseMetaAdsSettings } from './meta-ads';
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
      .query<{ website_id: string; platform: string; workspace_id: string; settings: unknown; status: string; updated_at: Date }>(
        `SELECT website_id, platform, workspace_id, settings, status, updated_at FROM ad_destinations
         ${websiteId ? 'WHERE website_id = $1' : ''} ORDER BY website_id, platform`,
        websiteId ? [websiteId] : [],
      )
      .then((result) => res.json({ data: result.rows.map((r) => ({ ...r, updated_at: r.updated_at.toISOString() })) }), next);
  });

  router.put('/crm/ad-destinations/:websiteId/:platform', (req, res, next) => {
    const { websiteId, platform } = req.params;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const problem = checkDestination(platform, body);
    if (problem !== null) return next(new ProblemError('invalid-request', { detail: problem, remediation: 'Fix the destination as the message says and send it again.' }));
    const sealed = deps.box.seal(adDestinationKey(websiteId, platform as AdPlatform), body['credentials'] as Credentials);
    deps.sql
      .query(
        `INSERT INTO ad_destinations (website_id, platform, workspace_id, credentials, settings, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, 'active', $6, $6)
         ON CONFLICT (website_id, platform) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, credentials = EXCLUDED.credentials,
           settings = EXCLUDED.settings, status = 'active', updated_at = EXCLUDED.updated_at`,
        [websiteId, platform, body['workspace_id'], sealed, JSON.stringify(body['settings']), deps.now()],
      )
      .then(() => res.json({ data: { website_id: websiteId, platform, workspace_id: body['workspace_id'], settings: body['settings'], status: 'active' } }), next);
  });

  router.delete('/crm/ad-destinations/:websiteId/:platform', (req, res, next) => {
    deps.sql
      .query('DELETE FROM ad_destinations WHERE website_id = $1 AND platform = $2', [req.params.websiteId, req.params.platform])
      .then((result) => (result.rowCount > 0 ? res.status(204).end() : next(new ProblemError('not-found', { detail: 'No such ad destination.', remediation: 'List them with GET /admin/crm/ad-destinations.' }))), next);
  });
}

/** Why a destination body is unusable, or null when it is fine. */
function checkDestination(platform: string, body: Record<string, unknown>): string | null {
  if (!AD_PLATFORMS.includes(platform as AdPlatform)) return `platform must be one of ${AD_PLATFORMS.join(', ')}`;
  if (typeof body['workspace_id'] !== 'string' || body['workspace_id'] === '') return 'workspace_id is required';
  const credentials = body['credentials'];
  const required = platform === 'google_ads' ? ['developer_token', 'access_token'] : ['access_token'];
  if (typeof credentials !== 'object' || credentials === null || Array.isArray(credentials)
    || !Object.values(credentials).every((v) => typeof v === 'string')
    || !required.every((k) => typeof (credentials as Record<string, unknown>)[k] === 'string')) {
    return `credentials must be an object of strings with ${required.join(' and ')}`;
  }
  try {
    if (platform === 'google_ads') parseGoogleAdsSettings(body['settings']);
    else parseMetaAdsSettings(body['settings']);
  } catch (error) {
    if (error instanceof SettingsError) return error.message;
    throw error;
  }
  return null;
}
