// Runs one connection's sync: take the connection's lease, pull pages from its connector and
// commit each page in ONE transaction with its resume cursor (mirror rows, outbox messages,
// cursor), so an interrupted sync resumes after the last committed page and nothing is applied
// or announced twice. Retryable provider failures restart the pull from the last committed page
// after max(Retry-After, backoff); other failures end the sync with the error recorded and the
// cursor kept. A page asking for a pause (the provider's API allocation used up to the configured
// share) is committed, then the sync stops as paused: the schedule leaves the connection alone
// until then, and the next run resumes from that page. On completion, synced_through becomes the
// sync's start minus an overlap.
import { randomUUID } from 'node:crypto';
import type { Outbox, SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';
import { ProviderError, type Connector, type PullPage } from '../connectors/connector';
import { sleep } from '../connectors/sleep';
import { CredentialsError, type CredentialsBox } from '../connections/credentials';
import { LeaseLostError, type ClaimedConnection, type ConnectionsRepo } from '../connections/connections.repo';
import { applyRecords } from '../mirror';
import type { CrmRecords, MirrorScope } from '../records';
import { retryDelayMs, type RetryPolicy } from './retry';

export interface SyncRunnerDeps {
  sql: SqlStore;
  outbox: Outbox;
  repo: ConnectionsRepo;
  box: CredentialsBox;
  connectorFor: (provider: string) => Connector | null;
  logger: Logger;
  retry: RetryPolicy;
  /** How long a lease lasts without a committed page (renewed by each). */
  leaseMs: number;
  /** synced_through is set this much before the sync's start, so clock skew and late writes are re-read. */
  overlapMs: number;
}

export type SyncOutcome =
  | { status: 'completed'; pages: number; records: number }
  | { status: 'paused'; pages: number; records: number; until: string; reason: string }
  | { status: 'failed'; error: string }
  | { status: 'interrupted' };

export type SyncStart =
  | { status: 'started'; done: Promise<SyncOutcome> }
  /** Another sync of the connection holds its lease (here or on another replica). */
  | { status: 'busy' }
  /** No active connection with this id. */
  | { status: 'inactive' };

interface Running {
  controller: AbortController;
  done: Promise<SyncOutcome>;
}

export class SyncRunner {
  private readonly running = new Map<string, Running>();

  constructor(private readonly deps: SyncRunnerDeps) {}

  isRunning(connectionId: string): boolean {
    return this.running.has(connectionId);
  }

  /** Takes the lease and starts the sync in the background; resolves once it is known to run. */
  async begin(connectionId: string, options: { full: boolean }): Promise<SyncStart> {
    if (this.running.has(connectionId)) return { status: 'busy' };
    const owner = randomUUID();
    const claimed = await this.deps.repo.claim(connectionId, owner, this.deps.leaseMs, options.full);
    if (!claimed) {
      const view = await this.deps.repo.get(connectionId);
      return view && view.status === 'active' ? { status: 'busy' } : { status: 'inactive' };
    }
    const controller = new AbortController();
    const done = this.run(claimed, owner, options.full, controller.signal).finally(() => this.running.delete(connectionId));
    this.running.set(connectionId, { controller, done });
    return { status: 'started', done };
  }

  /** Runs the sync to its end; a busy or inactive connection is reported as such. */
  async syncNow(connectionId: string, options: { full: boolean }): Promise<SyncOutcome | SyncStart> {
    const start = await this.begin(connectionId, options);
    return start.status === 'started' ? start.done : start;
  }

  /** Interrupts one connection's sync here (it keeps its cursor). */
  async interrupt(connectionId: string): Promise<void> {
    const running = this.running.get(connectionId);
    if (!running) return;
    running.controller.abort(new SyncInterrupted());
    await running.done;
  }

  /** Interrupts every sync of this process and waits until each has recorded where it stopped. */
  async stopAll(): Promise<void> {
    const all = [...this.running.values()];
    for (const r of all) r.controller.abort(new SyncInterrupted());
    await Promise.all(all.map((r) => r.done));
  }

  private async run(claimed: ClaimedConnection, owner: string, full: boolean, signal: AbortSignal): Promise<SyncOutcome> {
    const { repo, logger } = this.deps;
    const log = logger.child({ connection: claimed.id, provider: claimed.provider });
    const started = Date.now();
    let pages = 0;
    let records = 0;
    try {
      const connector = this.deps.connectorFor(claimed.provider);
      if (!connector) throw new ProviderError(`no connector for provider "${claimed.provider}"`, null, false);
      const credentials = this.deps.box.open(claimed.id, claimed.credentials);
      const since = full || claimed.synced_through === null ? null : claimed.synced_through.toISOString();
      const scope: MirrorScope = { workspaceId: claimed.workspace_id, websiteId: claimed.website_id, provider: claimed.provider, source: `crm:${claimed.provider}` };
      log.info({ resumed: claimed.resume_cursor !== null, incremental: since !== null }, 'crm sync started');
      let cursor = claimed.resume_cursor;
      let failures = 0;
      let pause: PullPage['pause'];
      for (;;) {
        try {
          for await (const page of connector.pull({ credentials, settings: claimed.settings ?? {}, cursor, since, signal })) {
            const count = recordCount(page.records);
            await this.deps.sql.transaction(async (tx) => {
              await repo.commitPage(tx, claimed.id, owner, page.cursor, count, this.deps.leaseMs);
              if (page.usage) await repo.recordUsage(tx, claimed.id, page.usage);
              await applyRecords(tx, this.deps.outbox, scope, page.records);
            });
            this.deps.outbox.wake();
            cursor = page.cursor;
            failures = 0;
            pages += 1;
            records += count;
            if (page.pause) {
              pause = page.pause;
              break;
            }
          }
          break;
        } catch (error) {
          if (signal.aborted || !(error instanceof ProviderError) || !error.retryable) throw error;
          failures += 1;
          if (failures >= this.deps.retry.maxAttempts) throw error;
          const waitMs = retryDelayMs(error, failures, this.deps.retry);
          // A provider asking for a longer pause (a daily limit) ends this sync; a later one resumes.
          if (waitMs > this.deps.retry.maxDelayMs) throw error;
          log.warn({ status: error.status, attempt: failures, waitMs, reason: error.message }, 'crm sync: provider call failed; retrying from the last committed page');
          await repo.renew(claimed.id, owner, this.deps.leaseMs + waitMs);
          await sleep(waitMs, signal);
        }
      }
      if (pause && cursor !== null) {
        await repo.pause(claimed.id, owner, new Date(pause.until), pause.reason);
        log.warn({ pages, records, until: pause.until, reason: pause.reason }, 'crm sync paused at the provider\'s request; the next run after the pause resumes here');
        return { status: 'paused', pages, records, until: pause.until, reason: pause.reason };
      }
      await repo.complete(claimed.id, owner, this.deps.overlapMs);
      log.info({ pages, records, ms: Date.now() - started }, 'crm sync completed');
      return { status: 'completed', pages, records };
    } catch (error) {
      const interrupted = signal.aborted;
      const message = interrupted
        ? 'interrupted before it finished (the process stopped or the connection was removed); the next sync resumes after the last committed page'
        : describe(error);
      await repo.fail(claimed.id, owner, message).catch((e: unknown) => log.error({ reason: describe(e) }, 'crm sync: could not record the failure'));
      if (interrupted) {
        log.info({ pages, records }, 'crm sync interrupted');
        return { status: 'interrupted' };
      }
      const unexpected = !(error instanceof ProviderError || error instanceof CredentialsError || error instanceof LeaseLostError);
      log[unexpected ? 'error' : 'warn']({ pages, records, reason: message }, 'crm sync failed');
      return { status: 'failed', error: message };
    }
  }
}

class SyncInterrupted extends Error {
  override name = 'AbortError';
  constructor() {
    super('sync interrupted');
  }
}

function recordCount(r: CrmRecords): number {
  const deleted = (r.deleted?.companies?.length ?? 0) + (r.deleted?.contacts?.length ?? 0) + (r.deleted?.deals?.length ?? 0);
  return (r.pipelines?.length ?? 0) + (r.companies?.length ?? 0) + (r.contacts?.length ?? 0) + (r.deals?.length ?? 0) + deleted;
}

/** A failure as stored and shown: what went wrong, never a credential (none reach error text). */
function describe(error: unknown): string {
  if (error instanceof ProviderError || error instanceof CredentialsError || error instanceof LeaseLostError) return error.message;
  return `internal error: ${error instanceof Error ? error.message : String(error)}`;
}
