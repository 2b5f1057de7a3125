// The in-process driver: same topology, routing, ack/retry/dead-letter and RPC semantics as
// the RabbitMQ driver, on a MemoryBroker shared by the clients of one process. On a durable broker
// (a journal under the data directory) a publish is confirmed once it is on the disk, and a retry
// or a dead letter is on the disk before the delivery it replaces is acked.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { busMetrics, type BusMetrics } from './bus-metrics';
import { busTelemetry, type BusTelemetry } from './bus-telemetry';
import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_PREFETCH,
  DEFAULT_RETRY_DELAY_MS,
  failuresFrom,
  settleDelivery,
  type DeliveryPolicy,
} from './delivery';
import { ProblemError } from '../errors';
import { decodeDeadLetter, encodeEnvelope } from './envelope';
import { MemoryBroker, type Settler, type StoredMessage, type Subscription } from './memory-broker';
import { busNames, DEFAULT_NAMESPACE, HEADER, rpcServiceOf, type BusNames } from './names';
import { consumerGroup, stoppable, DEFAULT_HEARTBEAT_MS, DEFAULT_PARTITIONS, PartitionBalancer, routingKeyOf, splitTypes, type MemberNote, type PartitionSettings, type PartitionTurn } from './partitions';
import { planRedrive, redriveMax, RedriveTally, PARTITION_HEADER } from './redrive';
import { answerRpc, encodeRpcRequest, readRpcReply } from './rpc-wire';
import {
  BusClosedError,
  RpcNoConsumerError,
  RpcTimeoutError,
  type Bus,
  type BusHealth,
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  type Envelope,
  type MessageValidator,
  type PublishInput,
  type QueueKind,
  type QueueStat,
  type RedriveOptions,
  type RedriveResult,
  type RpcCallOptions,
  type ServeRpcOptions,
} from './types';

export interface MemoryBusOptions {
  /** A broker, or the name of a process-wide one. Default: the broker named 'default'. */
  broker?: MemoryBroker | string;
  namespace?: string;
  validator: MessageValidator;
  logger: Logger;
  metrics?: Registry;
  /** Partitioned types and their partition count (default: none partitioned, 1 partition). */
  partitions?: PartitionSettings;
  /**
   * Most body characters (about bytes) waiting for this broker's consumers before a publish from
   * outside a message handler waits for room (default 64 Mi). The queues live in memory (and, on a
   * durable broker, in its journal too), so this bounds both.
   */
  maxBacklogChars?: number;
  /**
   * How long such a publish waits for room before it is refused with a 503 service-unavailable
   * problem carrying Retry-After (default 250 ms): held briefly, never for seconds.
   */
  backlogWaitMs?: number;
  /** Most body characters one service's in-process dead-letter queue keeps (default 16 Mi); the oldest go first. */
  maxDeadLetterChars?: number;
}

export const DEFAULT_MAX_BACKLOG_CHARS = 64 * 1024 * 1024;
export const DEFAULT_BACKLOG_WAIT_MS = 250;
export const DEFAULT_MAX_DEAD_LETTER_CHARS = 16 * 1024 * 1024;
/** Seconds a refused publisher is told to wait (Retry-After). */
const BACKLOG_RETRY_AFTER_S = 1;

/**
 * Set while a message handler runs: its publishes never wait for room. Waiting is for the edge (an
 * API request, a schedule); a handler waiting on a queue whose consumer waits on it would deadlock.
 */
const inHandler = new AsyncLocalStorage<true>();

const DEFAULT_RPC_TIMEOUT_MS = 10_000;

interface PendingCall {
  method: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class MemoryBus implements Bus {
  readonly driver = 'memory' as const;
  readonly broker: MemoryBroker;
  readonly partitions: number;
  private readonly partitioning: PartitionSettings;
  private readonly maxBacklogChars: number;
  private readonly backlogWaitMs: number;
  private readonly maxDeadLetterChars: number;
  private readonly names: BusNames;
  private readonly validator: MessageValidator;
  private readonly logger: Logger;
  private readonly metrics: BusMetrics;
  private readonly telemetry: BusTelemetry;
  private readonly consumers = new Set<MemoryConsumer | MemoryPartitionConsumer>();
  private readonly balancers = new Set<PartitionBalancer>();
  /** One per consume(): aborted when that consumer drains or this client closes. */
  private readonly stops = new Set<AbortController>();
  private readonly pending = new Map<string, PendingCall>();
  private readonly replyTarget = `reply.${randomUUID()}`;
  private closed = false;

  constructor(options: MemoryBusOptions) {
    this.broker = options.broker instanceof MemoryBroker ? options.broker : MemoryBroker.named(options.broker);
    this.names = busNames(options.namespace ?? DEFAULT_NAMESPACE);
    this.validator = options.validator;
    this.logger = options.logger;
    this.metrics = busMetrics(options.metrics);
    this.telemetry = busTelemetry(options.metrics);
    this.partitioning = options.partitions ?? { count: DEFAULT_PARTITIONS, types: new Set() };
    this.partitions = this.partitioning.count;
    this.maxBacklogChars = options.maxBacklogChars ?? DEFAULT_MAX_BACKLOG_CHARS;
    this.backlogWaitMs = options.backlogWaitMs ?? DEFAULT_BACKLOG_WAIT_MS;
    this.maxDeadLetterChars = options.maxDeadLetterChars ?? DEFAULT_MAX_DEAD_LETTER_CHARS;
    this.broker.attach();
    this.broker.openReplyTarget(this.replyTarget, (m) => this.onReply(m));
  }

  async publish<P>(input: PublishInput<P>): Promise<Envelope<P>> {
    const [envelope] = await this.publishMany([input]);
    return envelope as Envelope<P>;
  }

  async publishMany(inputs: PublishInput[]): Promise<Envelope[]> {
    this.assertOpen();
    // Validate all before sending any, as the AMQP driver does.
    const keys = inputs.map((input) => routingKeyOf(input, this.partitioning, this.names.partitionKey));
    const encoded = inputs.map((input) => encodeEnvelope(input, this.validator));
    // Backpressure at the edge: an entry point waits a moment while the consumers are behind, then
    // is refused (503 with Retry-After) rather than held or accepted beyond what the queues may hold.
    if (!inHandler.getStore()) await this.admitFrom(inputs[0]?.source ?? 'other', inputs.length);
    this.assertOpen();
    const publishing = this.telemetry.publishing(encoded.map((e) => e.envelope.type));
    const writes: Promise<void>[] = [];
    for (const [i, { envelope, body }] of encoded.entries()) {
      // The parsed wire form goes along for the first consumer (it is also what this returns: read-only).
      const routed = this.broker.publish(this.names.exchange, keys[i] as string, { body, headers: { ...publishing.headers }, redelivered: false, expiresAt: null, checkedBy: this.validator, parsed: envelope }, writes);
      this.metrics.count('published', envelope.source);
      if (routed === 0) {
        this.metrics.count('unroutable', envelope.source);
        // Legal (the consuming service may not be deployed), so debug level; the metric counts it.
        this.logger.debug({ type: envelope.type, id: envelope.id }, 'bus: message unroutable (no consumer queue bound to its type); dropped');
      }
    }
    publishing.done();
    // Confirmed once every durable copy is on the disk (one flush for all that were written together).
    await this.broker.confirm(writes);
    await Promise.resolve();
    return encoded.map((e) => e.envelope);
  }

  async admit(): Promise<void> {
    this.assertOpen();
    await this.admitFrom('edge', 0);
  }

  /** Waits up to the backlog wait for room; throws the 503 problem when none came. */
  private async admitFrom(source: string, messages: number): Promise<void> {
    if (!(await this.broker.waitForRoom(this.maxBacklogChars, this.backlogWaitMs))) throw this.backlogFull(messages, source);
  }

  private backlogFull(messages: number, source: string): ProblemError {
    this.metrics.count('refused', source, messages);
    const mib = Math.round(this.maxBacklogChars / (1024 * 1024));
    return new ProblemError('service-unavailable', {
      detail: `Sightline is behind: the messages waiting for its consumers fill the bound of ${mib} MiB, so this request was not accepted (nothing of it was stored).`,
      remediation: `Retry after Retry-After (${BACKLOG_RETRY_AFTER_S} s) with the request unchanged (the same Idempotency-Key); send smaller or fewer batches at once if it persists.`,
      headers: { 'Retry-After': String(BACKLOG_RETRY_AFTER_S) },
    });
  }

  /**
   * Waits until this broker's consumers have handled everything queued for them (a drain on
   * shutdown), at most `timeoutMs`; returns how many messages were still waiting then. Those stay in
   * the journal of a durable broker for the next start; a broker without one loses them.
   */
  async finishQueued(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.broker.pendingWork() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.broker.pendingWork();
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    const { service } = options;
    const { plain, partitioned } = splitTypes(options.types, this.partitioning);
    const queue = this.declareServiceQueue(service, plain);
    const stop = new AbortController();
    this.stops.add(stop);
    const policy: DeliveryPolicy = {
      handler: options.handler,
      validator: this.validator,
      maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      logger: this.logger,
      service,
      telemetry: this.telemetry,
      // A delivery waiting out a store outage is given back when this consumer drains or the bus closes.
      stopping: stop.signal,
      ...(options.maxOutageBackoffMs !== undefined ? { maxOutageBackoffMs: options.maxOutageBackoffMs } : {}),
      onOutage: () => this.metrics.count('store_outage', service),
    };
    const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
    // The service queue always: it carries the plain types, and drains what an older topology left there.
    const consumer = new MemoryConsumer(this.broker, queue, prefetch, (message, settler) => this.handleEvent(service, queue, policy, message, settler));
    this.track(consumer);
    if (partitioned.length === 0) return stoppable(consumer, stop);

    const balancer = new PartitionBalancer({
      member: randomUUID(),
      count: this.partitioning.count,
      heartbeatMs: this.partitioning.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      logger: this.logger,
      open: async (onNote) => {
        const channel = this.broker.listen(`${this.names.membersExchange}:${service}`, (note) => onNote(note as MemberNote));
        return { send: async (note) => channel.send(note), close: async () => channel.close() };
      },
    });
    const turns: MemoryPartitionConsumer[] = [];
    for (let n = 0; n < this.partitioning.count; n += 1) {
      const partitionQueue = this.declarePartitionQueue(service, n, partitioned);
      const turn: MemoryPartitionConsumer = new MemoryPartitionConsumer(this.broker, n, partitionQueue, prefetch, {
        handle: (message, settler) => this.handleEvent(service, partitionQueue, policy, message, settler, n),
        shouldYield: () => balancer.shouldYield(n),
        yieldNow: () => void balancer.yieldTurn(turn),
      });
      this.track(turn);
      turns.push(turn);
    }
    await balancer.start(turns);
    this.balancers.add(balancer);
    return stoppable(consumerGroup([consumer, ...turns], balancer), stop);
  }

  async declareQueue(service: string, types: string[]): Promise<void> {
    this.assertOpen();
    const { plain, partitioned } = splitTypes(types, this.partitioning);
    this.declareServiceQueue(service, plain);
    if (partitioned.length > 0) for (let n = 0; n < this.partitioning.count; n += 1) this.declarePartitionQueue(service, n, partitioned);
  }

  private declareServiceQueue(service: string, types: string[]): string {
    const queue = this.names.serviceQueue(service);
    this.broker.assertQueue(this.names.deadLetterQueue(service), { durable: true });
    this.broker.assertQueue(queue, { durable: true });
    for (const type of types) this.broker.bind(this.names.exchange, queue, type);
    return queue;
  }

  /** Partition `n` of a service's partitioned types: one active consumer at a time. */
  private declarePartitionQueue(service: string, n: number, types: string[]): string {
    const queue = this.names.partitionQueue(service, n);
    this.broker.assertQueue(this.names.deadLetterQueue(service), { durable: true });
    this.broker.assertQueue(queue, { singleActive: true, durable: true });
    for (const type of types) this.broker.bind(this.names.exchange, queue, this.names.partitionKey(type, n));
    return queue;
  }

  async serveRpc(options: ServeRpcOptions): Promise<Consumer> {
    this.assertOpen();
    const ctx = { methods: options.methods, validator: this.validator, logger: this.logger, service: options.service, telemetry: this.telemetry };
    const consumer = new MemoryConsumer(this.broker, this.names.rpcQueue(options.service), options.prefetch ?? DEFAULT_PREFETCH, async (message, settler) => {
      const method = String(message.headers[HEADER.method] ?? '');
      const deadline = Number(message.headers[HEADER.deadline] ?? 0);
      if (deadline > 0 && Date.now() > deadline) {
        this.logger.debug({ method }, 'bus: rpc request past its deadline; skipped');
      } else if (message.replyTo && message.correlationId) {
        // The caller's parsed copy is used once, and only if it passed this server's validator.
        const parsed = message.parsed;
        message.parsed = undefined;
        const checked = parsed !== undefined && message.checkedBy === this.validator ? { parsed, checkedBy: this.validator } : undefined;
        const body = await answerRpc(method, message.body, ctx, message.headers, checked);
        if (settler.outstanding) {
          this.broker.reply(message.replyTo, { body, headers: {}, redelivered: false, expiresAt: null, correlationId: message.correlationId });
        }
      }
      settler.ack();
    });
    this.track(consumer);
    return consumer;
  }

  async rpc<R = unknown>(method: string, request: unknown, options?: RpcCallOptions): Promise<R> {
    this.assertOpen();
    const service = rpcServiceOf(method);
    const { body, wire } = encodeRpcRequest(method, request, this.validator);
    const timeoutMs = options?.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    const queue = this.names.rpcQueue(service);
    return this.telemetry.rpcClient(method, options?.caller, (traceHeaders) => {
      // As RabbitMQ returns a mandatory request no queue takes: nobody serves it now, so say so at once.
      if ((this.broker.queueStats(queue)?.consumers ?? 0) === 0) return Promise.reject(new RpcNoConsumerError(method, service));
      const correlationId = randomUUID();
      return new Promise<R>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending.delete(correlationId);
          reject(new RpcTimeoutError(method, timeoutMs));
        }, timeoutMs);
        this.pending.set(correlationId, { method, resolve: resolve as (v: unknown) => void, reject, timer });
        this.broker.sendToQueue(queue, {
          body,
          checkedBy: this.validator,
          parsed: wire,
          headers: { ...traceHeaders, [HEADER.method]: method, [HEADER.deadline]: Date.now() + timeoutMs },
          redelivered: false,
          expiresAt: Date.now() + timeoutMs,
          correlationId,
          replyTo: this.replyTarget,
        });
      });
    });
  }

  health(): BusHealth {
    return this.closed ? { ok: false, detail: 'bus client closed' } : { ok: true };
  }

  async queueStats(service: string, kinds: readonly QueueKind[]): Promise<QueueStat[]> {
    this.assertOpen();
    const names: Partial<Record<QueueKind, string>> = { main: this.names.serviceQueue(service), dead_letter: this.names.deadLetterQueue(service), rpc: this.names.rpcQueue(service) };
    const stats: QueueStat[] = [];
    for (const queue of kinds) {
      if (queue === 'partitioned') {
        const parts = Array.from({ length: this.partitioning.count }, (_, n) => this.broker.queueStats(this.names.partitionQueue(service, n))).filter((p) => p !== null);
        if (parts.length > 0) stats.push({ service, queue, messages: parts.reduce((sum, p) => sum + p.messages, 0), consumers: parts.reduce((sum, p) => sum + p.consumers, 0) });
        continue;
      }
      const name = names[queue];
      const stat = name === undefined ? null : this.broker.queueStats(name);
      if (stat) stats.push({ service, queue, ...stat });
    }
    return stats;
  }

  async takeDeadLetters(service: string, max = 100): Promise<DeadLetter[]> {
    this.assertOpen();
    const letters: DeadLetter[] = [];
    const queue = this.names.deadLetterQueue(service);
    while (letters.length < max) {
      const message = this.broker.take(queue);
      if (!message) break;
      letters.push(decodeDeadLetter(message.body, message.headers));
    }
    return letters;
  }

  /**
   * Redrive (redrive.ts) on the in-process broker: one synchronous pass over the dead-letter queue,
   * so concurrent redrives never move a letter twice; the copies are journalled and confirmed before
   * the dead letters' entries go (MemoryBroker.move). A dry run only looks.
   */
  async redriveDeadLetters(service: string, options: RedriveOptions = {}): Promise<RedriveResult> {
    this.assertOpen();
    const dryRun = options.dryRun ?? false;
    const max = redriveMax(options.max);
    const deadQueue = this.names.deadLetterQueue(service);
    const tally = new RedriveTally(service, dryRun);
    const target = { service, names: this.names, partitions: this.partitioning };
    const route = (message: StoredMessage): { queue: string; message: StoredMessage } | null => {
      const plan = planRedrive(message.body, message.headers, target);
      if (plan.kind === 'keep') {
        tally.keep(plan.cause);
        return null;
      }
      if (this.broker.queueStats(plan.queue) === null) {
        tally.keep('no queue');
        return null;
      }
      tally.move(plan);
      return { queue: plan.queue, message: { body: message.body, headers: plan.headers, redelivered: false, expiresAt: null } };
    };
    if (dryRun) {
      for (const message of this.broker.peek(deadQueue)) {
        if (tally.movedCount >= max) break;
        route(message);
      }
    } else {
      await this.broker.move(deadQueue, max, route);
      if (tally.movedCount > 0) this.logger.info({ service, moved: tally.movedCount }, 'bus: dead letters redriven to their service queue');
    }
    return tally.result(this.broker.queueStats(deadQueue)?.messages ?? 0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.stops) stop.abort();
    this.stops.clear();
    for (const balancer of this.balancers) balancer.halt();
    for (const consumer of this.consumers) consumer.disconnect();
    this.consumers.clear();
    this.broker.closeReplyTarget(this.replyTarget);
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(new BusClosedError());
    }
    this.pending.clear();
    await this.broker.detach();
  }

  private track(consumer: MemoryConsumer | MemoryPartitionConsumer): void {
    this.consumers.add(consumer);
    consumer.onDrained = () => this.consumers.delete(consumer);
  }

  /**
   * `queue`: where a retry goes back to (the service queue, or the message's partition);
   * `partition`: that partition, recorded on a dead letter so a redrive puts it back there.
   */
  private async handleEvent(service: string, queue: string, policy: DeliveryPolicy, message: StoredMessage, settler: Settler, partition?: number): Promise<void> {
    const previous = failuresFrom(message.headers, HEADER.failures);
    // What this process published through the same validator was checked then; parse, do not check
    // again. The publisher's parsed copy is used once: a redelivery gets the body parsed afresh.
    const parsed = message.parsed;
    message.parsed = undefined;
    const outcome = await inHandler.run(true, () => settleDelivery(message.body, previous, policy, message.headers, message.checkedBy === policy.validator, parsed));
    // The client closed while the handler ran: the broker already took the message back.
    if (!settler.outstanding) return;
    if (outcome.kind === 'ack') {
      this.metrics.count('consumed', service);
      settler.ack();
      return;
    }
    // Stopped while a store was out of reach: back to the head of its queue, no attempt spent.
    if (outcome.kind === 'requeue') {
      settler.requeue();
      return;
    }
    // The retry or the dead letter replaces this delivery: it is on the disk before this is acked.
    const writes: Promise<void>[] = [];
    if (outcome.kind === 'retry') {
      this.metrics.count('retried', service);
      const retry: StoredMessage = { body: message.body, headers: { ...message.headers, [HEADER.failures]: outcome.attempts }, redelivered: false, expiresAt: null, ...(message.checkedBy ? { checkedBy: message.checkedBy } : {}) };
      // The broker owns the timer, so a retry survives this client closing.
      this.broker.sendLater(queue, retry, outcome.delayMs, writes);
    } else {
      this.metrics.count('dead_lettered', service);
      const deadQueue = this.names.deadLetterQueue(service);
      this.broker.sendToQueue(deadQueue, {
        body: message.body,
        headers: { ...message.headers, [HEADER.failures]: outcome.attempts, [HEADER.reason]: outcome.reason, ...(partition === undefined ? {} : { [PARTITION_HEADER]: partition }) },
        redelivered: false,
        expiresAt: null,
      }, writes);
      // Held in memory, dead letters are bounded: a consumer that fails everything must not grow
      // the process without end. The oldest go first, counted and logged.
      const dropped = this.broker.trim(deadQueue, this.maxDeadLetterChars);
      if (dropped > 0) {
        this.metrics.count('dead_letter_dropped', service, dropped);
        this.logger.error({ service, dropped }, 'bus: in-process dead-letter queue over its bound; its oldest dead letters were dropped');
      }
    }
    try {
      await this.broker.confirm(writes);
    } catch (error) {
      // Not on the disk: keep this delivery instead (it comes again), rather than lose it.
      this.logger.error({ service, err: error }, 'bus: journal write failed; the delivery goes back to its queue');
      settler.requeue();
      return;
    }
    settler.ack();
  }

  private onReply(message: StoredMessage): void {
    const call = message.correlationId ? this.pending.get(message.correlationId) : undefined;
    if (!call || !message.correlationId) return; // late reply to a call that already timed out
    this.pending.delete(message.correlationId);
    clearTimeout(call.timer);
    try {
      call.resolve(readRpcReply(call.method, message.body, this.validator));
    } catch (err) {
      call.reject(err as Error);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new BusClosedError();
  }
}

class MemoryConsumer implements Consumer {
  private readonly subscription: Subscription;
  private readonly inflight = new Set<Promise<void>>();
  private draining = false;
  onDrained: () => void = () => undefined;

  constructor(
    private readonly broker: MemoryBroker,
    queue: string,
    prefetch: number,
    handle: (message: StoredMessage, settler: Settler) => Promise<void>,
  ) {
    this.subscription = broker.subscribe(queue, prefetch, (message, settler) => {
      const run = handle(message, settler)
        .catch(() => settler.requeue())
        .finally(() => this.inflight.delete(run));
      this.inflight.add(run);
    });
  }

  async drain(): Promise<void> {
    if (!this.draining) {
      this.draining = true;
      this.broker.cancel(this.subscription);
    }
    // Messages handed out but not yet started are in flight too: they start on the next tick.
    while (this.inflight.size > 0 || this.subscription.unacked.size > 0) {
      if (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
      else await new Promise((resolve) => setImmediate(resolve));
    }
    this.onDrained();
  }

  disconnect(): void {
    this.broker.disconnect(this.subscription);
  }

  isHealthy(): boolean {
    return true;
  }
}

/**
 * One partition of a service's partitioned types. Its queue delivers to one subscriber at a time;
 * handing the partition on (or draining) finishes what started, then disconnects, which puts the
 * unstarted messages back at the head of the queue in order for the next subscriber in line.
 */
class MemoryPartitionConsumer implements Consumer, PartitionTurn {
  private subscription: Subscription;
  private readonly inflight = new Set<Promise<void>>();
  /** Deliveries are held, not started, while the partition is being handed on or drained. */
  private paused = false;
  private state: 'running' | 'stopped' = 'running';
  onDrained: () => void = () => undefined;

  constructor(
    private readonly broker: MemoryBroker,
    readonly partition: number,
    private readonly queue: string,
    private readonly prefetch: number,
    private readonly hooks: { handle(message: StoredMessage, settler: Settler): Promise<void>; shouldYield(): boolean; yieldNow(): void },
  ) {
    this.subscription = this.subscribe();
  }

  private subscribe(): Subscription {
    return this.broker.subscribe(this.queue, this.prefetch, (message, settler) => {
      if (this.paused) return; // held: given back in place when this subscription lets go
      if (this.hooks.shouldYield()) {
        this.hooks.yieldNow();
        return;
      }
      const run = this.hooks
        .handle(message, settler)
        .catch(() => settler.requeue())
        .finally(() => this.inflight.delete(run));
      this.inflight.add(run);
    });
  }

  private async letGo(): Promise<void> {
    this.paused = true;
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    this.broker.disconnect(this.subscription);
  }

  async yieldTurn(): Promise<void> {
    if (this.paused || this.state !== 'running') return;
    await this.letGo();
    if (this.state !== 'running') return;
    // Back in line, behind whoever the broker activated. Unpaused first: the broker may deliver
    // while subscribing, and a held delivery would wait until the next letting go.
    this.paused = false;
    this.subscription = this.subscribe();
  }

  async drain(): Promise<void> {
    if (this.state === 'running') {
      this.state = 'stopped';
      await this.letGo();
    }
    this.onDrained();
  }

  disconnect(): void {
    this.state = 'stopped';
    this.broker.disconnect(this.subscription);
  }

  isHealthy(): boolean {
    return true;
  }
}
