// Transactional outbox: a service writes the messages a change must publish into its own `outbox`
// table inside the same transaction as the change, and a relay publishes them afterwards with
// broker confirms. A crash or a broker outage between the two can delay a message but never lose
// it; the relay retries with backoff and keeps each message's id, so consumers deduplicate a
// publish that was confirmed but not yet marked (at least once, in practice once).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { messageValidator, type MessageType, type MessageValidator, type PublishedBy, type ServiceName } from '@sightline/proto-schemas';
import type { PublishInputOf } from '../bus/service-bus';
import type { Envelope, PublishInput } from '../bus/types';
import { InvalidMessageError } from '../bus/types';
import type { SqlExecutor, SqlStore } from '../stores/types';
import { counterOf, memoizeFor, polledGauge } from '../telemetry/metric-families';
import { storeOwnerOf } from '../telemetry/store-telemetry';

/** A message to publish once the business transaction commits: what the bus publishes, at the current version. */
export type OutboxMessage<T extends MessageType = MessageType> = T extends MessageType ? Omit<PublishInputOf<T>, 'version'> : never;

/** What the relay needs of a bus: a service's own bus (ServiceBus) is one. */
export interface OutboxPublisher {
  publishMany(inputs: readonly PublishInput[]): Promise<Envelope[]>;
}

export interface OutboxOptions {
  /** Idle poll interval; `wake()` cuts it short. Default 100 ms. */
  pollIntervalMs?: number;
  /** Rows published per round. Default 100. */
  batchSize?: number;
  /** First retry delay after a failed publish, doubled per failure. Default 200 ms. */
  initialBackoffMs?: number;
  /** Cap of the retry delay. Default 5 000 ms. */
  maxBackoffMs?: number;
  /** Published rows are deleted after this long. Default 7 days. */
  retentionMs?: number;
  /** Schema check run by `add`, so a message the bus would refuse never enters the table. */
  validator?: MessageValidator;
}

/** A service's outbox: it records only the message types the catalog lets that service publish. */
export interface Outbox<S extends ServiceName = ServiceName> {
  /** Records a message inside the caller's transaction; returns its envelope id. */
  add(tx: SqlExecutor, message: OutboxMessage<PublishedBy<S>>): Promise<string>;
  /** Records several messages in one statement inside the caller's transaction; returns their ids. */
  addMany(tx: SqlExecutor, messages: readonly OutboxMessage<PublishedBy<S>>[]): Promise<string[]>;
  /** Asks the relay to look now (call after the transaction committed). */
  wake(): void;
  /** Starts the relay loop. */
  start(): void;
  /** Stops the relay: waits for the round in flight (up to `timeoutMs`, default 5 000). */
  stop(timeoutMs?: number): Promise<void>;
  /** Holds publishing (rows keep accumulating) until `resume()`: for operators and tests. */
  pause(): void;
  resume(): void;
  isPaused(): boolean;
  /** Rows not yet published. */
  pendingCount(): Promise<number>;
}

interface OutboxRow {
  id: string;
  message_id: string;
  type: string;
  payload: unknown;
  source: string;
  workspace_id: string | null;
  website_id: string | null;
  created_at: Date;
}

const CLEANUP_EVERY_MS = 10 * 60_000;
/** The backlog gauge reads the table at most this often, however often Prometheus scrapes. */
const BACKLOG_READ_EVERY_MS = 5_000;

export function createOutbox<S extends ServiceName = ServiceName>(sql: SqlStore, bus: OutboxPublisher, logger: Logger, options: OutboxOptions = {}): Outbox<S> {
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const batchSize = options.batchSize ?? 100;
  const initialBackoffMs = options.initialBackoffMs ?? 200;
  const maxBackoffMs = options.maxBackoffMs ?? 5_000;
  const retentionMs = options.retentionMs ?? 7 * 24 * 3600_000;
  const validator = options.validator ?? messageValidator;

  let running = false;
  let paused = false;
  let loop: Promise<void> | null = null;
  let wakeUp: (() => void) | null = null;
  let woken = false;
  let lastCleanup = 0;
  // Given a store the runner handed to a service, the relay reports as that service: its backlog
  // (`sightline_outbox_pending_messages`) and failed publish rounds (`sightline_outbox_publish_failures_total`).
  const owner = storeOwnerOf(sql);
  const failures = owner ? counterOf(owner.metrics, 'sightline_outbox_publish_failures_total', 'Outbox relay rounds that could not publish (broker or database unavailable), by service.', ['service'] as const) : null;
  const backlog = owner ? polledGauge(owner.metrics, { name: 'sightline_outbox_pending_messages', help: 'Messages committed to a service\'s outbox and not yet published, by service.', labelNames: ['service'] as const }) : null;
  let stopReportingBacklog: (() => void) | null = null;

  /** Sleeps until `ms` passed or `wake()` was called (a wake that came earlier counts). */
  const idle = (ms: number): Promise<void> => {
    if (woken) {
      woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakeUp = null;
        woken = false;
        resolve();
      }
      wakeUp = done;
    });
  };

  const wake = (): void => {
    woken = true;
    wakeUp?.();
  };

  const toInput = (row: OutboxRow): PublishInput => ({
    id: row.message_id,
    type: row.type,
    payload: row.payload,
    source: row.source,
    workspace_id: row.workspace_id,
    website_id: row.website_id,
    occurred_at: row.created_at.toISOString(),
  });

  // ORDER BY outbox.id: the text alias `id` would sort "10" before "9".
  const selectSql = `SELECT id::text AS id, message_id::text AS message_id, type, payload, source, workspace_id, website_id, created_at
    FROM outbox WHERE published_at IS NULL ORDER BY outbox.id LIMIT $1`;
  const markSql = 'UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])';

  /** Publishes one batch in id order; returns how many rows it published. */
  const publishRound = async (): Promise<number> => {
    if (sql.driver === 'postgres') {
      // Several replicas may run a relay: one at a time holds the lock, so order is kept and no
      // row is published twice by two relays. The transaction spans the publish on purpose.
      return sql.transaction(async (tx) => {
        const lock = await tx.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox')) AS ok");
        if (!lock.rows[0]?.ok) return 0;
        const rows = (await tx.query<OutboxRow>(`${selectSql} FOR UPDATE`, [batchSize])).rows;
        if (rows.length === 0) return 0;
        await bus.publishMany(rows.map(toInput));
        await tx.query(markSql, [rows.map((r) => r.id)]);
        return rows.length;
      });
    }
    // PGlite is one process's single connection: no other relay exists, and holding its lock
    // across a publish would stall every other service in the process.
    const rows = (await sql.query<OutboxRow>(selectSql, [batchSize])).rows;
    if (rows.length === 0) return 0;
    await bus.publishMany(rows.map(toInput));
    await sql.query(markSql, [rows.map((r) => r.id)]);
    return rows.length;
  };

  const cleanup = async (): Promise<void> => {
    if (Date.now() - lastCleanup < CLEANUP_EVERY_MS) return;
    lastCleanup = Date.now();
    await sql.query('DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < $1', [new Date(Date.now() - retentionMs)]);
  };

  const run = async (): Promise<void> => {
    let backoff = initialBackoffMs;
    while (running) {
      if (paused) {
        await idle(pollIntervalMs);
        continue;
      }
      let published: number;
      try {
        published = await publishRound();
        backoff = initialBackoffMs;
        await cleanup();
      } catch (error) {
        // Broker or database unavailable: keep the rows, wait, try again. Never drop.
        if (owner) failures?.inc({ service: owner.service });
        logger.warn({ err: error instanceof Error ? error.message : String(error), retryInMs: backoff }, 'outbox: publish failed; will retry');
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, maxBackoffMs);
        continue;
      }
      if (published < batchSize) await idle(pollIntervalMs);
    }
  };

  const addMany = async (tx: SqlExecutor, messages: readonly OutboxMessage[]): Promise<string[]> => {
    if (messages.length === 0) return [];
    const rows = messages.map((message) => {
      const id = message.id ?? randomUUID();
      const envelope = JSON.parse(JSON.stringify({
        id,
        type: message.type,
        version: 1,
        occurred_at: message.occurred_at ?? new Date().toISOString(),
        workspace_id: message.workspace_id ?? null,
        website_id: message.website_id ?? null,
        source: message.source,
        payload: message.payload,
      })) as Parameters<MessageValidator['validateEnvelope']>[0];
      const problem = validator.validateEnvelope(envelope);
      if (problem !== null) throw new InvalidMessageError(`outbox: message ${message.type} is invalid: ${problem}`);
      return { id, type: message.type, payload: JSON.stringify(envelope.payload), source: message.source, workspace_id: envelope.workspace_id, website_id: envelope.website_id, created_at: envelope.occurred_at };
    });
    await tx.query(
      `INSERT INTO outbox (message_id, type, payload, source, workspace_id, website_id, created_at)
       SELECT id, type, payload::jsonb, source, workspace_id, website_id, created_at
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
           AS m(id, type, payload, source, workspace_id, website_id, created_at)`,
      [rows.map((r) => r.id), rows.map((r) => r.type), rows.map((r) => r.payload), rows.map((r) => r.source), rows.map((r) => r.workspace_id), rows.map((r) => r.website_id), rows.map((r) => r.created_at)],
    );
    return rows.map((r) => r.id);
  };

  async function pendingCount(): Promise<number> {
    const result = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
    return result.rows[0]?.n ?? 0;
  }

  return {
    async add(tx: SqlExecutor, message: OutboxMessage): Promise<string> {
      const [id] = await addMany(tx, [message]);
      return id as string;
    },
    addMany,
    wake,
    start(): void {
      if (running) return;
      running = true;
      if (owner && backlog) {
        const service = owner.service;
        const read = memoizeFor(BACKLOG_READ_EVERY_MS, () => pendingCount());
        stopReportingBacklog = backlog.add(async () => [{ labels: { service }, value: await read() }]);
      }
      loop = run().catch((error: unknown) => logger.error({ err: error }, 'outbox: relay stopped unexpectedly'));
    },
    async stop(timeoutMs = 5_000): Promise<void> {
      running = false;
      stopReportingBacklog?.();
      stopReportingBacklog = null;
      wake();
      if (!loop) return;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          logger.warn('outbox: relay still waiting on a publish at stop; its rows stay for the next start');
          resolve();
        }, timeoutMs);
      });
      await Promise.race([loop, timedOut]);
      clearTimeout(timer);
      loop = null;
    },
    pause(): void {
      paused = true;
    },
    resume(): void {
      paused = false;
      wake();
    },
    isPaused: () => paused,
    pendingCount,
  };
}
