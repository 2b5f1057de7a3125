// Works the queue: claims due rows with a lease, makes the call (CRM push through the website's
// connector, or the ad platform's upload), and records the result with its status message in one
// transaction. Retryable failures (429, 5xx, network, timeouts) come back after an exponential
// backoff that honours the destination's Retry-After; after max_attempts, or at once for a
// permanent error, the row is dead: the dead-letter state an operator can retry from.
import { createQueueWorker, type Outbox, type QueueWorker, type SqlStore } from '@sightline/kit';
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import type { Logger } from 'pino';
import type { CredentialsBox } from '../connections/credentials';
import { ProviderError, type Connector, type Credentials, type PushOutcome, type PushResult } from '../connectors/connector';
import type { CrmSyncOptions } from '../deps';
import { retryDelayMs, type RetryPolicy } from './backoff';
import { recordAdPush } from '../ads/ad-metrics';
import { adCredentials, knownCrmRecord, loadConnection, saveAdPushStatus, type AdPlatform } from './connection';
import { SettingsError, type UploadResult } from './conversion';
import { GOOGLE_ADS_URL, parseGoogleAdsSettings, uploadClickConversions, type GoogleUploadBody } from './google-ads';
import { DATA_MANAGER_URL, DATA_MANAGER_URL_KEY, ingestEvents, isIngestEventsBody } from './google-data-manager';
import { LINKEDIN_API_URL, linkedinTooOld, linkedinVersion, parseLinkedinAdsSettings, sendConversionEvents, type LinkedinUploadBody } from './linkedin-ads';
import { META_GRAPH_URL, metaTooOld, parseMetaAdsSettings, sendServerEvents, type MetaAdsSettings, type MetaEventsBody } from './meta-ads';
import { statusMessage } from './status';
import { claimDue, rememberValues, updateRow, type RowUpdate, type WritebackRow } from './store';

export type ConnectorLookup = (provider: string, options: CrmSyncOptions) => Connector | null;

export interface WorkerDeps {
  sql: SqlStore;
  outbox: Outbox;
  logger: Logger;
  options: CrmSyncOptions;
  box: CredentialsBox;
  connectorFor: ConnectorLookup;
  policy: RetryPolicy;
  now: () => Date;
  /** How long a claimed row stays reserved for its worker. */
  leaseMs: number;
  batchSize: number;
  /** Deadline of one call to a CRM or ad platform. */
  callTimeoutMs: number;
}

export type Worker = QueueWorker;

/** What one attempt came to, before it is recorded. */
type Attempt =
  | { kind: 'written'; result: UploadResult; crmProvider?: string }
  | { kind: 'skipped'; detail: string }
  | { kind: 'dead'; detail: string };

const PLATFORM_URLS: Record<AdPlatform, string> = { google_ads: GOOGLE_ADS_URL, meta_ads: META_GRAPH_URL, linkedin_ads: LINKEDIN_API_URL };
const PLATFORM_NAMES: Record<AdPlatform, string> = { google_ads: 'Google Ads', meta_ads: 'Meta', linkedin_ads: 'LinkedIn' };

export function createWorker(deps: WorkerDeps): Worker {
  return createQueueWorker<WritebackRow>({
    claim: (now, leaseUntil, limit) => claimDue(deps.sql, now, leaseUntil, limit),
    work: (row) => processRow(deps, row),
    workBatch: (rows) => processBatch(deps, rows),
    onError: (error, row) => deps.logger.error({ err: error, writeback: row?.id }, row ? 'write-back: row failed unexpectedly; it is retried when its lease ends' : 'write-back: queue round failed'),
    now: deps.now,
    leaseMs: deps.leaseMs,
    batchSize: deps.batchSize,
  });
}

async function processRow(deps: WorkerDeps, row: WritebackRow): Promise<void> {
  let attempt: Attempt | { kind: 'failed'; error: unknown };
  try {
    attempt = row.target === 'crm' ? await pushToCrm(deps, row) : await uploadToAdPlatform(deps, row, row.target);
  } catch (error) {
    attempt = { kind: 'failed', error };
  }
  await recordAttempt(deps, row, attempt);
}

/**
 * A claimed batch: CRM rows of one website whose connector takes many outcomes in one call
 * (Salesforce's sObject Collections) go together; every other row is worked alone, in claim order.
 */
async function processBatch(deps: WorkerDeps, rows: WritebackRow[]): Promise<void> {
  const crmByWebsite = new Map<string, WritebackRow[]>();
  for (const row of rows) {
    if (row.target !== 'crm') continue;
    const group = crmByWebsite.get(row.website_id);
    if (group) group.push(row);
    else crmByWebsite.set(row.website_id, [row]);
  }
  const batched = new Set<WritebackRow>();
  for (const group of crmByWebsite.values()) {
    if (group.length < 2) continue;
    const done = await pushCrmBatch(deps, group);
    for (const row of done) batched.add(row);
  }
  for (const row of rows) {
    if (batched.has(row)) continue;
    await processRow(deps, row).catch((error: unknown) => deps.logger.error({ err: error, writeback: row.id }, 'write-back: row failed unexpectedly; it is retried when its lease ends'));
  }
}

/** One website's CRM rows in the connector's batch call; returns the rows it recorded (none when the connector has no batch call). */
async function pushCrmBatch(deps: WorkerDeps, rows: WritebackRow[]): Promise<WritebackRow[]> {
  const connection = await opened(() => loadConnection(deps.sql, rows[0]!.website_id, deps.box)).catch(() => null);
  const connector = connection === null ? null : deps.connectorFor(connection.provider, deps.options);
  if (connection === null || !connector?.pushMany) return [];
  const items = await Promise.all(rows.map(async (row) => {
    const request = row.payload as OutcomeWritebackRequestedV1;
    const crmId = await knownCrmRecord(deps.sql, row.website_id, connection.provider, row.conversion_id, request.email);
    return { request, ...(crmId === null ? {} : { target: { crm_id: crmId } }) };
  }));
  let outcomes: PushOutcome[];
  try {
    outcomes = await connector.pushMany(connection.credentials, items, AbortSignal.timeout(deps.callTimeoutMs), connection.settings);
  } catch (error) {
    // The call as a whole failed (login, outage): every row fails alike, each with its own backoff.
    outcomes = rows.map(() => ({ ok: false, error: error as ProviderError }));
  }
  for (const [i, row] of rows.entries()) {
    const outcome = outcomes[i];
    const attempt: Attempt | { kind: 'failed'; error: unknown } = outcome?.ok
      ? { kind: 'written', result: writtenResult(connection.provider, outcome.result), crmProvider: connection.provider }
      : { kind: 'failed', error: outcome?.error ?? new ProviderError('no answer for this outcome in the batch', null, true) };
    await recordAttempt(deps, row, attempt);
  }
  return rows;
}

/** Records what an attempt came to, with its status message, in one transaction. */
async function recordAttempt(deps: WorkerDeps, row: WritebackRow, attempt: Attempt | { kind: 'failed'; error: unknown }): Promise<void> {
  let update: RowUpdate;
  let crmProvider: string | null = null;
  if (attempt.kind === 'written') {
    update = { status: 'done', detail: attempt.result.detail, externalId: attempt.result.externalId, attempted: true };
    crmProvider = attempt.crmProvider ?? null;
  } else if (attempt.kind === 'skipped') {
    update = { status: 'skipped', detail: attempt.detail, attempted: false };
  } else if (attempt.kind === 'dead') {
    update = { status: 'dead', error: attempt.detail, detail: attempt.detail, attempted: false };
  } else {
    update = failure(deps, row, attempt.error);
  }
  const now = deps.now();
  await deps.sql.transaction(async (tx) => {
    const updated = await updateRow(tx, row.id, update, now);
    if (crmProvider !== null) {
      // What the CRM now holds: a sync bringing these values back is recognised as an echo.
      const request = row.payload as OutcomeWritebackRequestedV1;
      const key = { websiteId: row.website_id, provider: crmProvider, conversionId: row.conversion_id };
      await rememberValues(tx, key, request.changes.map((c) => ({ field: c.field, value: c.new_value })), 'crm-sync:writeback', now);
    }
    // The account's last push, for its status (GET /admin/crm/ad-destinations, `connections status`).
    if (row.target !== 'crm' && update.status === 'done') await saveAdPushStatus(tx, row.website_id, row.target, now);
    await deps.outbox.add(tx, statusMessage(updated));
  });
  deps.outbox.wake();
  if (row.target !== 'crm') recordAdPush(row.target, update.status);
  if (update.status === 'dead') deps.logger.warn({ writeback: row.id, target: row.target, error: update.error }, 'write-back: dead');
}

/** A thrown failure: retried with backoff while attempts remain and it is retryable, else dead. */
function failure(deps: WorkerDeps, row: WritebackRow, error: unknown): RowUpdate {
  const message = describe(error, deps.callTimeoutMs);
  const retryable = error instanceof ProviderError ? error.retryable : !(error instanceof SettingsError);
  const attempts = row.attempts + 1;
  if (!retryable) return { status: 'dead', error: message, detail: `permanent error: ${message}`, attempted: true };
  if (attempts >= row.max_attempts) return { status: 'dead', error: message, detail: `gave up after ${attempts} attempts: ${message}`, attempted: true };
  const asked = error instanceof ProviderError ? error.retryAfterMs : null;
  return { status: 'failed', error: message, nextAttemptAt: new Date(deps.now().getTime() + retryDelayMs(deps.policy, attempts, asked)) };
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof ProviderError) return error.message;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

/** Opening stored credentials can only fail for good (wrong key, damaged row): never retried. */
function opened<T>(load: () => Promise<T>): Promise<T> {
  return load().catch((error: unknown) => {
    throw new ProviderError(`cannot open the stored credentials: ${error instanceof Error ? error.message : String(error)}`, null, false);
  });
}

async function pushToCrm(deps: WorkerDeps, row: WritebackRow): Promise<Attempt> {
  const connection = await opened(() => loadConnection(deps.sql, row.website_id, deps.box));
  if (connection === null) return { kind: 'skipped', detail: 'no CRM connected (the connection was removed)' };
  const connector = deps.connectorFor(connection.provider, deps.options);
  if (connector === null) return { kind: 'dead', detail: `no write-back connector for provider "${connection.provider}"` };
  const request = row.payload as OutcomeWritebackRequestedV1;
  const crmId = await knownCrmRecord(deps.sql, row.website_id, connection.provider, row.conversion_id, request.email);
  const target = crmId === null ? undefined : { crm_id: crmId };
  const result = await connector.push(connection.credentials, request, AbortSignal.timeout(deps.callTimeoutMs), target, connection.settings);
  return { kind: 'written', result: writtenResult(connection.provider, result), crmProvider: connection.provider };
}

function writtenResult(provider: string, result: PushResult): UploadResult {
  const fields = Object.keys(result.fields);
  return { detail: `written to ${provider} record ${result.crm_id}${fields.length > 0 ? `: ${fields.join(', ')}` : ''}`, externalId: result.crm_id };
}

async function uploadToAdPlatform(deps: WorkerDeps, row: WritebackRow, platform: AdPlatform): Promise<Attempt> {
  const account = await opened(() => adCredentials(deps.sql, row.website_id, platform, deps.box));
  if (account === null) return { kind: 'skipped', detail: `no ${PLATFORM_NAMES[platform]} account configured (it was removed)` };
  const baseUrl = deps.options.adPlatformUrls?.[platform] ?? PLATFORM_URLS[platform];
  const signal = AbortSignal.timeout(deps.callTimeoutMs);
  const credentials: Credentials = account.credentials;
  if (platform === 'linkedin_ads') {
    const body = row.payload as LinkedinUploadBody;
    // LinkedIn refuses events over 90 days old: a row that waited that long (retries, an outage) is skipped with the reason.
    const tooOld = linkedinTooOld(body, deps.now());
    if (tooOld !== null) return { kind: 'skipped', detail: `not sent: ${tooOld}` };
    const settings = parseLinkedinAdsSettings(account.settings);
    return { kind: 'written', result: await sendConversionEvents(baseUrl, credentials, settings, linkedinVersion(settings, account.api_version), body, signal, deps.now()) };
  }
  if (platform === 'google_ads' && isIngestEventsBody(row.payload)) {
    // The Data Manager API (default for Google): its own base URL, OAuth token only.
    const dataManagerUrl = deps.options.adPlatformUrls?.[DATA_MANAGER_URL_KEY] ?? DATA_MANAGER_URL;
    return { kind: 'written', result: await ingestEvents(dataManagerUrl, credentials, row.payload, signal, deps.now()) };
  }
  if (platform === 'meta_ads') {
    // Meta refuses events over 7 days old (system_generated / other): such a row is skipped with the reason.
    const tooOld = metaTooOld(row.payload as MetaEventsBody, deps.now());
    if (tooOld !== null) return { kind: 'skipped', detail: `not sent: ${tooOld}` };
  }
  const result = platform === 'google_ads'
    ? await uploadClickConversions(baseUrl, credentials, parseGoogleAdsSettings(account.settings), row.payload as GoogleUploadBody, signal, deps.now())
    : await sendServerEvents(baseUrl, credentials, withPinnedVersion(parseMetaAdsSettings(account.settings), account.api_version), row.payload as MetaEventsBody, signal, deps.now());
  return { kind: 'written', result };
}

/** Meta's Graph version: the operator's pinned version (ad_destinations.api_version) over the settings' (which default to the versions table). */
function withPinnedVersion(settings: MetaAdsSettings, pinned: string | null): MetaAdsSettings {
  return pinned?.trim() ? { ...settings, api_version: pinned.trim() } : settings;
}
