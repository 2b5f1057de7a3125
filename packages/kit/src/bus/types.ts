// The bus contract. Two drivers implement it (RabbitMQ and in-process) and one contract
// suite runs unchanged against both, so a service cannot tell which one it is on.

import type { Envelope } from '@sightline/proto-schemas';

/** Every fact on the bus travels in this envelope (DESIGN.md "Services"); defined with its schema. */
export type { Envelope };

/** What a publisher supplies; the bus fills in id (when absent), version and occurred_at. */
export interface PublishInput<P = unknown> {
  type: string;
  payload: P;
  source: string;
  workspace_id?: string | null;
  website_id?: string | null;
  /** Reusing an id on retry lets consumers deduplicate. */
  id?: string;
  occurred_at?: string;
  version?: number;
  /**
   * For a partitioned type (catalog `partitionedBy`): the partition, `partitionOf(key, bus.partitions)`
   * of the message's ordering key. Required for those types, refused for the others.
   */
  partition?: number;
}

/** Schema checks the bus runs on publish and on consume (null when valid, else a reason). */
export type { MessageValidator } from '@sightline/proto-schemas';

export type MessageHandler = (envelope: Envelope) => Promise<void>;

export interface ConsumeOptions {
  /** Owning service; its durable queue is `sightline.<service>` and its dead letters `sightline.<service>.dlq`. */
  service: string;
  /** Message types (routing keys) to bind. */
  types: string[];
  handler: MessageHandler;
  /** Unacked messages in flight per consumer. Default 32. */
  prefetch?: number;
  /** Attempts before dead-lettering a retryable failure. Default 5. */
  maxAttempts?: number;
  /** Delay before a retry, grown per attempt (base * attempt). Default 200 ms. */
  retryDelayMs?: number;
  /**
   * Longest wait between two tries of a delivery held because a store is out of reach (1 s doubling
   * up to this; no attempt spent). Default 120 000 ms.
   */
  maxOutageBackoffMs?: number;
}

export interface Consumer {
  /** Stop taking new messages and wait for in-flight handlers to finish (ack or nack). */
  drain(): Promise<void>;
  /** False while the consumer is not subscribed (its channel died and it is resubscribing). */
  isHealthy(): boolean;
}

/** Whether the bus can carry work now; `/readyz` reports it. */
export interface BusHealth {
  ok: boolean;
  /** Why not, for operators: e.g. "connection to RabbitMQ lost". */
  detail?: string;
}

export type RpcHandler = (request: unknown) => Promise<unknown>;

export interface ServeRpcOptions {
  /** Owning service; requests arrive on `sightline.rpc.<service>`. */
  service: string;
  /** Method name (`<service>.<verb>`) to handler. */
  methods: Record<string, RpcHandler>;
  prefetch?: number;
}

export interface RpcCallOptions {
  /** Deadline; past it the call rejects with RpcTimeoutError. Default 10 000 ms. */
  timeoutMs?: number;
  /** The calling service, for the caller's RPC metrics (a service's own bus sets it). */
  caller?: string;
}

/** A service's queues the bus can report on; `partitioned` sums the partition queues. */
export type QueueKind = 'main' | 'retry' | 'dead_letter' | 'rpc' | 'partitioned';

/** What a queue holds now: messages ready for delivery, and subscribed consumers. */
export interface QueueStat {
  service: string;
  queue: QueueKind;
  messages: number;
  consumers: number;
}

export interface DeadLetter {
  envelope: Envelope | null;
  /** Raw body when the message could not be parsed as an envelope. */
  raw?: string;
  reason: string;
  attempts: number;
}

export interface RedriveOptions {
  /** Report what would move; move nothing. Default false. */
  dryRun?: boolean;
  /** Most dead letters to move (kept ones do not count). Default 10 000. */
  max?: number;
}

/** What a redrive moved (a dry run: would move) out of a service's dead-letter queue. */
export interface RedriveResult {
  service: string;
  dryRun: boolean;
  /** Dead letters moved back to the service's queues (a dry run: that would move). */
  moved: number;
  /** Moved per message type. */
  byType: Record<string, number>;
  /** Moved per dead-letter reason (the last failure's error, or the broker's own reason). */
  byReason: Record<string, number>;
  /** The first moved letters' ids (at most 10), oldest first. */
  firstIds: string[];
  /** Dead letters looked at and left in the dead-letter queue, in their place. */
  kept: number;
  /** Kept per cause: `unparseable` (the body is not an envelope), `partition unknown`, `no queue`. */
  keptBy: Record<string, number>;
  /** Dead letters in the queue afterwards: the kept ones, those past `max`, any that arrived meanwhile. */
  remaining: number;
}

export interface Bus {
  readonly driver: 'amqp' | 'memory';
  /** Partitions of every partitioned type (1 when nothing is partitioned). */
  readonly partitions: number;
  /**
   * Resolves once the broker has confirmed the message (persistent, mandatory), with the envelope
   * as consumers get it. Read-only: the in-process driver may hand that very object to a consumer.
   */
  publish<P>(input: PublishInput<P>): Promise<Envelope<P>>;
  /** Publishes several messages, resolving when all are confirmed. */
  publishMany(inputs: PublishInput[]): Promise<Envelope[]>;
  /**
   * For an entry point about to do work that ends in a publish (an intake request): resolves once a
   * publish from outside a handler would be taken now, or throws the 503 service-unavailable
   * ProblemError (with Retry-After) that publish would throw, before the work is spent. The
   * in-process bus waits up to its backlog wait; RabbitMQ resolves at once.
   */
  admit(): Promise<void>;
  consume(options: ConsumeOptions): Promise<Consumer>;
  /**
   * Declares a service's durable queue bound to `types` without consuming, so messages for a
   * consumer that is not deployed yet wait for it instead of being unroutable.
   */
  declareQueue(service: string, types: string[]): Promise<void>;
  serveRpc(options: ServeRpcOptions): Promise<Consumer>;
  /** Calls `method` on the service that serves it (the part of the name before the first dot). */
  rpc<R = unknown>(method: string, request: unknown, options?: RpcCallOptions): Promise<R>;
  /** Connected, and every consumer of this client subscribed. */
  health(): BusHealth;
  /**
   * Depth and consumers of a service's queues, for metrics: RabbitMQ answers from the broker (a
   * passive declare per queue); the in-process broker from its own queues, where a retry waits on a
   * timer rather than in a queue. A queue that does not exist is left out.
   */
  queueStats(service: string, kinds: readonly QueueKind[]): Promise<QueueStat[]>;
  /**
   * A drain on shutdown: waits until the consumers of this process have handled what is queued for
   * them, at most `timeoutMs`, and returns how many messages were still waiting. The in-process
   * broker holds its queues, so it waits; on RabbitMQ the queues outlive the process (other replicas
   * or the next start take them), so it returns 0 at once.
   */
  finishQueued(timeoutMs: number): Promise<number>;
  /** Reads (and removes) up to `max` dead letters of a service: for operators and tests. */
  takeDeadLetters(service: string, max?: number): Promise<DeadLetter[]>;
  /**
   * Moves a service's dead letters back to that service's own queue (a partitioned type to its
   * partition's queue; never through the exchange, so no other service gets a second copy), oldest
   * first and in order, each with the same message id, its failure count reset to 0 and its reason
   * removed. A letter that cannot be moved (a body that is not an envelope, a partition that cannot
   * be told, no queue of the service to take it) stays in the dead-letter queue and is counted as
   * kept. `dryRun` reports what would move and moves nothing. See bus/redrive.ts.
   */
  redriveDeadLetters(service: string, options?: RedriveOptions): Promise<RedriveResult>;
  close(): Promise<void>;
}

/** Thrown by a handler for a failure worth retrying (bounded by maxAttempts, then dead-lettered). */
export class RetryableError extends Error {
  override name = 'RetryableError';
}

/** Thrown by a handler for a failure that retrying cannot fix: straight to the dead-letter queue. */
export class NonRetryableError extends Error {
  override name = 'NonRetryableError';
}

/** An RPC found no reply before its deadline. The gateway answers it with a 503 problem. */
export class RpcTimeoutError extends Error {
  override name = 'RpcTimeoutError';
  constructor(readonly method: string, readonly timeoutMs: number) {
    super(`RPC ${method} got no reply within ${timeoutMs} ms`);
  }
}

/**
 * Nobody serves the method now: no consumer is subscribed to its service's request queue (RabbitMQ
 * returned the mandatory request; the in-process broker has no subscriber). Answered at once as a
 * 503 instead of waiting out the deadline.
 */
export class RpcNoConsumerError extends Error {
  override name = 'RpcNoConsumerError';
  constructor(readonly method: string, readonly service: string) {
    super(`RPC ${method}: no consumer serves ${service} (no running instance takes its requests)`);
  }
}

/**
 * An RPC handler threw. `problem` carries the typed domain error across the bus
 * (kind, status, detail, remediation, allowed) so the gateway can answer it as the spec says.
 */
export class RpcRemoteError extends Error {
  override name = 'RpcRemoteError';
  constructor(readonly method: string, readonly problem: RemoteProblem) {
    super(`RPC ${method} failed: ${problem.detail}`);
  }
}

export interface RemoteProblem {
  kind: string;
  status: number;
  detail: string;
  remediation?: string;
  allowed?: string[];
  extra?: Record<string, unknown>;
  /** Response headers the answer should carry (Retry-After). */
  headers?: Record<string, string>;
}

/** A message or RPC body failed its schema on the sending side: nothing was sent. */
export class InvalidMessageError extends Error {
  override name = 'InvalidMessageError';
}

/** The bus client was closed; calls made (or still waiting) after close end with this. */
export class BusClosedError extends Error {
  override name = 'BusClosedError';
  constructor() {
    super('bus client is closed');
  }
}
