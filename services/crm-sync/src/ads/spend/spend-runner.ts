// Runs one ad account's spend pull: take the account's lease (ad_spend_pulls, so one pull per
// account runs at a time across replicas), open its credentials, ask the platform's connector for
// the trailing window, and publish the rows as ads.report_imported through the outbox in ONE
// transaction with the account's status (last_pull_at, last_pull_rows, cleared error). Platforms
// have no incremental cursor: every pull re-reads a window of days and attribution keeps the newest
// copy of each (platform, level, item, day), so a re-pull restates instead of adding.
// The window is the cost window (default 3 days) on most pulls and the conversion window (default
// 30 days: platforms keep attributing conversions to past days) when the last wide pull is older
// than a day, or when asked. A failure never throws out of here: it is recorded on the account
// (last_pull_error with the platform's reason, next_pull_at after a backoff or the platform's
// retry hint) and the schedule leaves the account alone until then.
import { randomUUID } from 'node:crypto';
import type { AdsReportImportedV1 } from '@sightline/proto-schemas';
import type { Outbox, SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';
import { ProviderError } from '../../connectors/connector';
import { CredentialsError, type CredentialsBox } from '../../connections/credentials';
import { adCredentials, saveAdPullStatus, type AdConnectionPlatform } from '../../writeback/connection';
import { recordAdPull } from '../ad-metrics';
import { addDays, type SpendConnector, type SpendPlatform } from './spend.types';

/** Rows per ads.report_imported message (the schema allows 50,000; smaller keeps outbox rows small). */
export const ROWS_PER_MESSAGE = 5000;
/** A wide (conversion window) pull at most this often, unless asked. */
const WIDE_EVERY_MS = 24 * 3600_000;

export interface SpendWindows {
  costDays: number;
  conversionDays: number;
}

export interface SpendRunnerDeps {
  sql: SqlStore;
  outbox: Outbox<'crm-sync'>;
  box: CredentialsBox;
  logger: Logger;
  connectorFor: (platform: string) => SpendConnector | null;
  baseUrlFor: (platform: SpendPlatform) => string;
  /** Every configured base URL by key (adPlatformUrls), for calls besides the platform's main API. */
  urls: Readonly<Record<string, string>>;
  windows: SpendWindows;
  now: () => Date;
  /** How long a pull's lease lasts; a pull is aborted before it runs out. */
  leaseMs: number;
  /** Rate-limit pauses a pull may wait out itself; a longer retry hint ends it and sets next_pull_at. */
  maxWaitMs: number;
  /** Backoff after consecutive failures: base doubled per failure, capped. */
  backoff: { baseMs: number; maxMs: number };
  /** When the schedule runs next (the next_pull_at of a good pull), or null when unknown. */
  nextScheduled: () => Date | null;
}

/** The scheduled round takes accounts whose next_pull_at is this close (cron fires on the second, not before it). */
const DUE_SLACK_MS = 60_000;

export type PullOutcome =
  | { status: 'pulled'; platform: string; account_id: string; currency: string; window: { from: string; to: string }; rows: number; messages: number; requests: number }
  | { status: 'failed'; platform: string; error: string; retryable: boolean; next_pull_at: string }
  | { status: 'busy' }
  | { status: 'not-found' };

export interface PullOptions {
  /** 'cost': the short window; 'conversions': the wide one; default: wide when it is due. */
  window?: 'cost' | 'conversions';
}

const positiveInt = (value: unknown): number | null => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 365 ? n : null;
};

export class SpendRunner {
  private readonly running = new Set<AbortController>();

  constructor(private readonly deps: SpendRunnerDeps) {}

  /**
   * Accounts the scheduled round pulls, oldest pull first: every active one, except those waiting
   * out a failure until their next_pull_at (after a good pull next_pull_at only states the next
   * round, so a changed cron takes effect at once).
   */
  async due(): Promise<{ website_id: string; platform: string }[]> {
    const result = await this.deps.sql.query<{ website_id: string; platform: string }>(
      `SELECT website_id, platform FROM ad_destinations
        WHERE status = 'active' AND (last_pull_error IS NULL OR next_pull_at IS NULL OR next_pull_at <= $1)
          AND coalesce(settings->>'spend_pull', 'true') <> 'false'
        ORDER BY last_pull_at NULLS FIRST, website_id, platform`,
      [new Date(this.deps.now().getTime() + DUE_SLACK_MS)],
    );
    return result.rows.filter((r) => this.deps.connectorFor(r.platform) !== null);
  }

  async pull(websiteId: string, platform: string, options: PullOptions = {}): Promise<PullOutcome> {
    const connector = this.deps.connectorFor(platform);
    if (!connector) return { status: 'not-found' };
    const exists = await this.deps.sql.query<{ workspace_id: string; api_version: string | null }>(
      `SELECT workspace_id, api_version FROM ad_destinations WHERE website_id = $1 AND platform = $2 AND status = 'active'`,
      [websiteId, platform],
    );
    const destination = exists.rows[0];
    if (!destination) return { status: 'not-found' };
    const owner = randomUUID();
    const claimed = await this.deps.sql.query<{ failures: number; wide_pulled_at: Date | null }>(
      `INSERT INTO ad_spend_pulls (website_id, platform, lease_owner, lease_until, updated_at)
       VALUES ($1, $2, $3, now() + $4::double precision * interval '1 millisecond', now())
       ON CONFLICT (website_id, platform) DO UPDATE SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until, updated_at = now()
        WHERE ad_spend_pulls.lease_until IS NULL OR ad_spend_pulls.lease_until < now()
       RETURNING failures, wide_pulled_at`,
      [websiteId, platform, owner, this.deps.leaseMs],
    );
    const state = claimed.rows[0];
    if (!state) return { status: 'busy' };

    const log = this.deps.logger.child({ website: websiteId, platform });
    const controller = new AbortController();
    this.running.add(controller);
    // Abort well before the lease runs out, so two replicas never pull the same account at once.
    const timer = setTimeout(() => controller.abort(new ProviderError('the pull took longer than its lease; the next one starts over', null, true)), Math.max(1000, this.deps.leaseMs - 30_000));
    const now = this.deps.now();
    try {
      const account = await adCredentials(this.deps.sql, websiteId, platform as AdConnectionPlatform, this.deps.box);
      if (!account) return await this.release(owner, websiteId, platform, { status: 'not-found' });
      const settings = (typeof account.settings === 'object' && account.settings !== null ? account.settings : {}) as Record<string, unknown>;
      const problem = connector.checkSettings(settings);
      if (problem) throw new ProviderError(problem, null, false);
      const windows = {
        costDays: positiveInt(settings['spend_cost_days']) ?? this.deps.windows.costDays,
        conversionDays: positiveInt(settings['spend_conversion_days']) ?? this.deps.windows.conversionDays,
      };
      const wideDue = state.wide_pulled_at === null || now.getTime() - state.wide_pulled_at.getTime() >= WIDE_EVERY_MS;
      const wide = options.window === 'conversions' || (options.window === undefined && wideDue);
      const days = Math.max(1, wide ? Math.max(windows.costDays, windows.conversionDays) : windows.costDays);
      const today = now.toISOString().slice(0, 10);
      const window = { from: addDays(today, -(days - 1)), to: today };
      const pinned = destination.api_version ?? (typeof settings['api_version'] === 'string' ? settings['api_version'] : undefined);
      const report = await connector.pull({
        credentials: account.credentials,
        settings: pinned ? { ...settings, api_version: pinned } : settings,
        baseUrl: this.deps.baseUrlFor(connector.platform),
        urls: this.deps.urls,
        window,
        signal: controller.signal,
        maxWaitMs: this.deps.maxWaitMs,
      });
      const messages: AdsReportImportedV1[] = [];
      for (let i = 0; i < report.rows.length; i += ROWS_PER_MESSAGE) {
        messages.push({
          website_id: websiteId, workspace_id: destination.workspace_id, platform, account_id: report.account_id,
          account_name: report.account_name, currency: report.currency, rows: report.rows.slice(i, i + ROWS_PER_MESSAGE),
        });
      }
      await this.deps.sql.transaction(async (tx) => {
        const held = await tx.query(
          `UPDATE ad_spend_pulls SET lease_owner = NULL, lease_until = NULL, failures = 0,
             wide_pulled_at = CASE WHEN $4 THEN $5::timestamptz ELSE wide_pulled_at END, updated_at = now()
           WHERE website_id = $1 AND platform = $2 AND lease_owner = $3`,
          [websiteId, platform, owner, wide, now],
        );
        if (held.rowCount === 0) throw new ProviderError('the pull lease was lost (another replica took over); nothing was published', null, true);
        for (const payload of messages) await this.deps.outbox.add(tx, { type: 'ads.report_imported', workspace_id: destination.workspace_id, website_id: websiteId, source: `ads:${platform}`, payload });
        await saveAdPullStatus(tx, websiteId, platform as AdConnectionPlatform, { at: now, rows: report.rows.length, nextPullAt: this.deps.nextScheduled() });
      });
      this.deps.outbox.wake();
      recordAdPull(platform as AdConnectionPlatform, report.rows.length);
      log.info({ rows: report.rows.length, requests: report.requests, window, wide }, 'ad spend pulled');
      return { status: 'pulled', platform, account_id: report.account_id, currency: report.currency, window, rows: report.rows.length, messages: messages.length, requests: report.requests };
    } catch (error) {
      return await this.fail(owner, websiteId, platform, state.failures + 1, error, log);
    } finally {
      clearTimeout(timer);
      this.running.delete(controller);
    }
  }

  /** Aborts every pull of this process (each records its failure and releases its lease). */
  stopAll(): void {
    for (const c of this.running) c.abort(new ProviderError('crm-sync stopped during the pull; the next one starts over', null, true));
  }

  private async release<T>(owner: string, websiteId: string, platform: string, outcome: T): Promise<T> {
    await this.deps.sql.query(
      'UPDATE ad_spend_pulls SET lease_owner = NULL, lease_until = NULL WHERE website_id = $1 AND platform = $2 AND lease_owner = $3',
      [websiteId, platform, owner],
    );
    return outcome;
  }

  private async fail(owner: string, websiteId: string, platform: string, failures: number, error: unknown, log: Logger): Promise<PullOutcome> {
    const provider = error instanceof ProviderError ? error : null;
    const known = provider !== null || error instanceof CredentialsError;
    const message = provider?.message ?? (error instanceof CredentialsError ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`);
    const retryable = provider?.retryable ?? false;
    const { baseMs, maxMs } = this.deps.backoff;
    // A refusal (bad credential, no access, bad settings) is tried again much later: an operator fixes it.
    const backoff = Math.min(maxMs, (retryable ? baseMs : baseMs * 12) * 2 ** Math.min(20, failures - 1));
    const waitMs = Math.max(backoff, Math.min(provider?.retryAfterMs ?? 0, 24 * 3600_000));
    const next = new Date(this.deps.now().getTime() + waitMs);
    try {
      await this.deps.sql.transaction(async (tx) => {
        await tx.query(
          `UPDATE ad_spend_pulls SET lease_owner = NULL, lease_until = NULL, failures = $4, updated_at = now()
           WHERE website_id = $1 AND platform = $2 AND lease_owner = $3`,
          [websiteId, platform, owner, failures],
        );
        await saveAdPullStatus(tx, websiteId, platform as AdConnectionPlatform, { at: this.deps.now(), error: message, nextPullAt: next });
      });
    } catch (e) {
      log.error({ reason: e instanceof Error ? e.message : String(e) }, 'ad spend pull: could not record the failure');
    }
    log[known ? 'warn' : 'error']({ reason: message, failures, next_pull_at: next.toISOString() }, 'ad spend pull failed');
    return { status: 'failed', platform, error: message, retryable, next_pull_at: next.toISOString() };
  }
}
