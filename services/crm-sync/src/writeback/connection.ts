// Where a website's write-backs go: its CRM connection (the `connections` row the sync keeps,
// credentials sealed by connections/credentials.ts) and its ad-platform accounts
// (`ad_destinations`, sealed with the same box, bound to website and platform). The only SQL that
// opens credentials for a write-back.
import type { SqlExecutor } from '@sightline/kit';
import type { CredentialsBox } from '../connections/credentials';
import type { Credentials } from '../connectors/connector';

/** Every ad platform a website can connect (spend pulls, conversion uploads): ad_destinations.platform. */
export type AdConnectionPlatform = 'google_ads' | 'meta_ads' | 'linkedin_ads';
export const AD_PLATFORMS: readonly AdConnectionPlatform[] = ['google_ads', 'meta_ads', 'linkedin_ads'];
/**
 * The platforms the write-back queue uploads conversions to (writebacks.target, widened for
 * linkedin_ads by migration 005). A platform a website can connect but not upload to would be left
 * out here, and adDestinations() would not plan uploads for it.
 */
export type AdPlatform = 'google_ads' | 'meta_ads' | 'linkedin_ads';
export const UPLOAD_PLATFORMS: readonly AdPlatform[] = ['google_ads', 'meta_ads', 'linkedin_ads'];

export interface CrmConnection {
  id: string;
  provider: string;
  credentials: Credentials;
  /** The operator's settings (a provider's write-back field mapping). */
  settings: Record<string, unknown>;
}

export interface AdDestinationRow {
  platform: AdPlatform;
  workspace_id: string;
  settings: unknown;
  /** The operator's pinned API version for this account (ad_destinations.api_version), or null: see src/api-versions.ts apiVersion(). */
  api_version?: string | null;
}

/** The website's active CRM connection (provider only: no credentials are opened). */
export async function connectedProvider(sql: SqlExecutor, websiteId: string): Promise<string | null> {
  const result = await sql.query<{ provider: string }>(
    `SELECT provider FROM connections WHERE website_id::text = $1 AND status = 'active' ORDER BY created_at DESC LIMIT 1`,
    [websiteId],
  );
  return result.rows[0]?.provider ?? null;
}

/** The website's active CRM connection with its credentials opened, or null when none is connected. */
export async function loadConnection(sql: SqlExecutor, websiteId: string, box: CredentialsBox): Promise<CrmConnection | null> {
  const result = await sql.query<{ id: string; provider: string; credentials: Buffer | Uint8Array; settings: Record<string, unknown> | null }>(
    `SELECT id::text AS id, provider, credentials, settings FROM connections WHERE website_id::text = $1 AND status = 'active'
     ORDER BY created_at DESC LIMIT 1`,
    [websiteId],
  );
  const row = result.rows[0];
  if (!row) return null;
  return { id: row.id, provider: row.provider, credentials: box.open(row.id, Buffer.from(row.credentials)), settings: row.settings ?? {} };
}

/** The website's active ad-platform accounts that conversions are uploaded to (settings only). */
export async function adDestinations(sql: SqlExecutor, websiteId: string): Promise<AdDestinationRow[]> {
  const result = await sql.query<AdDestinationRow>(
    `SELECT platform, workspace_id, settings, api_version FROM ad_destinations WHERE website_id = $1 AND status = 'active' AND platform = ANY($2::text[]) ORDER BY platform`,
    [websiteId, [...UPLOAD_PLATFORMS]],
  );
  return result.rows;
}

/** What an ad account's sealed credentials are bound to (a sealed value moved to another row does not open). */
export const adDestinationKey = (websiteId: string, platform: AdConnectionPlatform): string => `ad-destination:${websiteId}:${platform}`;

/** The provider's contact id the CRM push should write: the record written last time, else the mirror's match by email. */
export async function knownCrmRecord(sql: SqlExecutor, websiteId: string, provider: string, conversionId: string, email: string | null): Promise<string | null> {
  const written = await sql.query<{ external_id: string }>(
    `SELECT external_id FROM writebacks WHERE conversion_id = $1::uuid AND target = 'crm' AND provider = $2 AND status = 'done' AND external_id IS NOT NULL
     ORDER BY updated_at DESC LIMIT 1`,
    [conversionId, provider],
  );
  if (written.rows[0]) return written.rows[0].external_id;
  if (!email) return null;
  const mirrored = await sql.query<{ crm_id: string }>(
    `SELECT crm_id FROM crm_contacts WHERE website_id::text = $1 AND provider = $2 AND lower(email) = lower($3) ORDER BY updated_at DESC LIMIT 1`,
    [websiteId, provider, email.trim()],
  );
  return mirrored.rows[0]?.crm_id ?? null;
}

/** One account's credentials, opened for an upload or a pull; null when it was removed meanwhile. */
export async function adCredentials(sql: SqlExecutor, websiteId: string, platform: AdConnectionPlatform, box: CredentialsBox): Promise<{ settings: unknown; credentials: Credentials; api_version: string | null } | null> {
  const result = await sql.query<{ settings: unknown; credentials: Buffer | Uint8Array; api_version: string | null }>(
    `SELECT settings, credentials, api_version FROM ad_destinations WHERE website_id = $1 AND platform = $2 AND status = 'active'`,
    [websiteId, platform],
  );
  const row = result.rows[0];
  if (!row) return null;
  return { settings: row.settings, credentials: box.open(adDestinationKey(websiteId, platform), Buffer.from(row.credentials)), api_version: row.api_version };
}

/** How a spend pull of one account ended, for its status (GET /admin/crm/ad-destinations, `sightline connections status`). */
export type AdPullOutcome = { at: Date; rows: number; nextPullAt?: Date | null } | { at: Date; error: string; nextPullAt?: Date | null };

/**
 * Records a spend pull on the account's row: a success sets last_pull_at and last_pull_rows and
 * clears last_pull_error; a failure keeps the last success and states the platform's reason.
 * next_pull_at is when the puller will try again (a retry after a failure, or the next schedule).
 */
export async function saveAdPullStatus(sql: SqlExecutor, websiteId: string, platform: AdConnectionPlatform, outcome: AdPullOutcome): Promise<void> {
  const next = outcome.nextPullAt ?? null;
  if ('error' in outcome) {
    await sql.query(
      `UPDATE ad_destinations SET last_pull_error = $3, last_pull_error_at = $4, next_pull_at = $5 WHERE website_id = $1 AND platform = $2`,
      [websiteId, platform, outcome.error.slice(0, 2000), outcome.at, next],
    );
  } else {
    await sql.query(
      `UPDATE ad_destinations SET last_pull_at = $3, last_pull_rows = $4, last_pull_error = NULL, next_pull_at = $5 WHERE website_id = $1 AND platform = $2`,
      [websiteId, platform, outcome.at, outcome.rows, next],
    );
  }
}

/** Records that conversions reached the account's platform at `at` (never moves back in time). */
export async function saveAdPushStatus(sql: SqlExecutor, websiteId: string, platform: AdConnectionPlatform, at: Date): Promise<void> {
  await sql.query(`UPDATE ad_destinations SET last_push_at = GREATEST(coalesce(last_push_at, $3), $3) WHERE website_id = $1 AND platform = $2`, [websiteId, platform, at]);
}
