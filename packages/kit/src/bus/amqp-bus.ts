// The RabbitMQ driver (amqplib).
//
// Topology per namespace: one durable topic exchange `<ns>.events` (routing key = message type);
// per consuming service a durable queue `<ns>.<service>`, a retry queue `<ns>.<service>.retry`
// (per-message TTL, dead-lettering back to the service queue) and a dead-letter queue
// `<ns>.<service>.dlq`; per RPC-serving service a queue `<ns>.rpc.<service>`.
//
// Unroutable publishes (returned by the broker because no queue is bound to the type) are legal:
// a consuming service may simply not be deployed. They are logged as a warning and counted,
// and `publish` still resolves; the message is gone, as it would be for any topic without
// subscribers.
//
// Retries are per-message TTLs on one queue, so a long delay at the head of the retry queue
// holds back shorter ones behind it: a retry may come later than asked, never earlier or lost.
// A message that kills its consumer before any ack is redelivered without counting an attempt.
import { randomUUID } from 'node:crypto';
import {
  connect,
  type Channel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Message,
  type Options,
  type RecoveringChannelModel,
} from 'amqplib';
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
import { decodeDeadLetter, encodeEnvelope } from './envelope';
import { busNames, DEFAULT_NAMESPACE, HEADER, rpcServiceOf, type BusNames } from './names';
import { consumerGroup, stoppable, DEFAULT_HEARTBEAT_MS, DEFAULT_PARTITIONS, PartitionBalancer, routingKeyOf, splitTypes, type MemberNote, type MembershipChannel, type PartitionSettings } from './partitions';
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

export interface AmqpBusOptions {
  url: string;
  namespace?: string;
  validator: MessageValidator;
  logger: Logger;
  metrics?: Registry;
  /** Connection attempts before `connect` gives up at startup (later drops retry forever). Default 3. */
  connectAttempts?: number;
  /** Partitioned types and their partition count (default: none partitioned, 1 partition). */
  partitions?: PartitionSettings;
}

const REPLY_TO = 'amq.rabbitmq.reply-to';
const DEFAULT_RPC_TIMEOUT_MS = 10_000;
const JSON_TYPE = 'application/json';

interface PendingCall {
  method: string;
  service: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** What the consumers need from their bus; kept narrow so the consumer class stays small. */
interface ConsumerHost {
  connection: RecoveringChannelModel;
  logger: Logger;
  isClosed(): boolean;
}

export class AmqpBus implements Bus {
  readonly driver = 'amqp' as const;
  readonly namespace: string;
  readonly partitions: number;
  private readonly partitioning: PartitionSettings;
  private readonly balancers = new Set<PartitionBalancer>();
  /** One per consume(): aborted when that consumer drains or this client closes. */
  private readonly stops = new Set<AbortController>();
  private readonly names: BusNames;
  private readonly validator: MessageValidator;
  private readonly logger: Logger;
  private readonly metrics: BusMetrics;
  private readonly telemetry: BusTelemetry;
  private readonly consumers = new Set<AmqpConsumer>();
  private readonly pending = new Map<string, PendingCall>();
  private publisher: Promise<ConfirmChannel> | null = null;
  private rpcChannel: Promise<Channel> | null = null;
  private closed = false;
  private connected = true;

  private constructor(
    private readonly connection: RecoveringChannelModel,
    options: AmqpBusOptions,
  ) {
    this.namespace = options.namespace ?? DEFAULT_NAMESPACE;
    this.names = busNames(this.namespace);
    this.validator = options.validator;
    this.logger = options.logger;
    this.metrics = busMetrics(options.metrics);
    this.telemetry = busTelemetry(options.metrics);
    this.partitioning = options.partitions ?? { count: DEFAULT_PARTITIONS, types: new Set() };
    this.partitions = this.partitioning.count;
  }

  /** Connects (retrying a few times) and keeps reconnecting with backoff after any drop. */
  static async connect(options: AmqpBusOptions): Promise<AmqpBus> {
    const attempts = Math.max(1, options.connectAttempts ?? 3);
    let connection: RecoveringChannelModel;
    try {
      connection = await connect(options.url, {
        clientProperties: { connection_name: `sightline-bus` },
        // Without TCP_NODELAY a small RPC frame waits for the peer's delayed ACK: ~40 ms per call.
        noDelay: true,
        recovery: { initialDelay: 200, maxDelay: 10_000, initialMaxRetries: attempts - 1 },
      });
    } catch (err) {
      throw new Error(`RabbitMQ is not reachable at ${redactUrl(options.url)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const bus = new AmqpBus(connection, options);
    connection.on('error', (err: Error) => options.logger.warn({ err: err.message }, 'bus: connection error'));
    connection.on('disconnect', (err: Error) => {
      bus.connected = false;
      options.logger.warn({ err: err.message }, 'bus: connection lost; reconnecting');
    });
    connection.on('connect', () => {
      bus.connected = true;
      options.logger.info('bus: connected to RabbitMQ');
    });
    connection.on('reconnect-failed', (err: Error) => options.logger.error({ err: err.message }, 'bus: gave up reconnecting'));
    return bus;
  }

  async publish<P>(input: PublishInput<P>): Promise<Envelope<P>> {
    const [envelope] = await this.publishMany([input]);
    return envelope as Envelope<P>;
  }

  async publishMany(inputs: PublishInput[]): Promise<Envelope[]> {
    this.assertOpen();
    const keys = inputs.map((input) => routingKeyOf(input, this.partitioning, this.names.partitionKey));
    const encoded = inputs.map((input) => encodeEnvelope(input, this.validator));
    const publishing = this.telemetry.publishing(encoded.map((e) => e.envelope.type));
    try {
      const channel = await this.getPublisher();
      await Promise.all(
        encoded.map(({ envelope, body }, i) =>
          confirmPublish(channel, this.names.exchange, keys[i] as string, Buffer.from(body), {
            persistent: true,
            mandatory: true,
            contentType: JSON_TYPE,
            messageId: envelope.id,
            type: envelope.type,
            appId: envelope.source,
            timestamp: Math.floor(Date.now() / 1000),
            headers: publishing.headers,
          }).then(() => this.metrics.count('published', envelope.source)),
        ),
      );
    } catch (error) {
      publishing.done(error);
      throw error;
    }
    publishing.done();
    return encoded.map((e) => e.envelope);
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    const { service } = options;
    const { plain, partitioned } = splitTypes(options.types, this.partitioning);
    const retryQueue = this.names.retryQueue(service);
    const deadQueue = this.names.deadLetterQueue(service);
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
    const consumer = new AmqpConsumer(this.host(), prefetch, {
      declare: (ch) => this.declareServiceQueue(ch, service, plain),
      handle: (ch, msg) => this.handleEvent(ch, msg, policy, retryQueue, deadQueue),
    });
    await this.startConsumer(consumer);
    if (partitioned.length === 0) return stoppable(consumer, stop);

    const balancer = new PartitionBalancer({
      member: randomUUID(),
      count: this.partitioning.count,
      heartbeatMs: this.partitioning.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      logger: this.logger,
      open: (onNote) => this.openMembership(service, onNote),
    });
    const turns: AmqpConsumer[] = [];
    try {
      for (let n = 0; n < this.partitioning.count; n += 1) {
        const partitionRetry = this.names.partitionRetryQueue(service, n);
        const turn: AmqpConsumer = new AmqpConsumer(this.host(), prefetch, {
          declare: (ch) => this.declarePartitionQueue(ch, service, n, partitioned),
          handle: (ch, msg) => this.handleEvent(ch, msg, policy, partitionRetry, deadQueue, n),
          singleActive: { partition: n, shouldYield: () => balancer.shouldYield(n), yieldNow: () => void balancer.yieldTurn(turn) },
        });
        turns.push(turn);
        await this.startConsumer(turn);
      }
      await balancer.start(turns);
    } catch (error) {
      balancer.halt();
      for (const turn of turns) turn.stop();
      throw error;
    }
    this.balancers.add(balancer);
    return stoppable(consumerGroup([consumer, ...turns], balancer), stop);
  }

  /** The service's membership channel: an exclusive queue on the members exchange, bound to the service. */
  private async openMembership(service: string, onNote: (note: MemberNote) => void): Promise<MembershipChannel> {
    let channel: Channel | null = null;
    let closed = false;
    let reopen: NodeJS.Timeout | null = null;
    const open = async (): Promise<void> => {
      const ch = await this.connection.createChannel();
      ch.on('error', (err: Error) => this.logger.debug({ err: err.message }, 'bus: membership channel error'));
      ch.on('close', () => {
        if (channel !== ch) return;
        channel = null;
        // A dropped connection: announce again once it is back (until then the others may expire us).
        if (!closed && !this.closed) {
          reopen = setTimeout(() => void open().catch(() => undefined), 1_000);
          reopen.unref();
        }
      });
      await ch.assertExchange(this.names.membersExchange, 'topic', { durable: true });
      const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
      await ch.bindQueue(queue, this.names.membersExchange, service);
      await ch.consume(queue, (msg) => {
        if (!msg) return;
        try {
          const note = JSON.parse(msg.content.toString('utf8')) as MemberNote;
          if (typeof note.member === 'string' && typeof note.leaving === 'boolean') onNote(note);
        } catch {
          // Not a note; ignore it.
        }
      }, { noAck: true });
      channel = ch;
    };
    await open();
    return {
      send: async (note) => {
        channel?.publish(this.names.membersExchange, service, Buffer.from(JSON.stringify(note)), { persistent: false, contentType: JSON_TYPE });
      },
      close: async () => {
        closed = true;
        if (reopen) clearTimeout(reopen);
        const ch = channel;
        channel = null;
        if (ch) await ch.close().catch(() => undefined);
      },
    };
  }

  async serveRpc(options: ServeRpcOptions): Promise<Consumer> {
    this.assertOpen();
    const queue = this.names.rpcQueue(options.service);
    const ctx = { methods: options.methods, validator: this.validator, logger: this.logger, service: options.service, telemetry: this.telemetry };
    const consumer = new AmqpConsumer(this.host(), options.prefetch ?? DEFAULT_PREFETCH, {
      // Not durable: a request is worthless after its deadline, so a broker restart may drop them.
      // Auto-deleted when its last consumer leaves, so a request for a service nobody runs has no
      // queue to go to: the broker returns it (mandatory) and the caller fails fast.
      declare: async (ch) => (await ch.assertQueue(queue, { durable: false, autoDelete: true }), queue),
      handle: async (ch, msg) => {
        const headers = msg.properties.headers ?? {};
        const method = String(headers[HEADER.method] ?? msg.properties.type ?? '');
        const deadline = Number(headers[HEADER.deadline] ?? 0);
        const replyTo: unknown = msg.properties.replyTo;
        const correlationId: unknown = msg.properties.correlationId;
        if (deadline > 0 && Date.now() > deadline) {
          this.logger.debug({ method }, 'bus: rpc request past its deadline; skipped');
        } else if (typeof replyTo === 'string' && typeof correlationId === 'string') {
          const body = await answerRpc(method, msg.content.toString('utf8'), ctx, headers);
          ch.sendToQueue(replyTo, Buffer.from(body), { correlationId, contentType: JSON_TYPE });
        } else {
          this.logger.warn({ method }, 'bus: rpc request without reply-to; dropped');
        }
        ch.ack(msg);
      },
    });
    await this.startConsumer(consumer);
    return consumer;
  }

  async rpc<R = unknown>(method: string, request: unknown, options?: RpcCallOptions): Promise<R> {
    this.assertOpen();
    const service = rpcServiceOf(method);
    const queue = this.names.rpcQueue(service);
    const { body } = encodeRpcRequest(method, request, this.validator);
    const timeoutMs = options?.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    return this.telemetry.rpcClient(method, options?.caller, (traceHeaders) => {
      const correlationId = randomUUID();
      return new Promise<R>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending.delete(correlationId);
          reject(new RpcTimeoutError(method, timeoutMs));
        }, timeoutMs);
        this.pending.set(correlationId, { method, service, resolve: resolve as (v: unknown) => void, reject, timer });
        const deadline = Date.now() + timeoutMs;
        // Any failure to send is left to the deadline: the caller sees one kind of outcome.
        this.getRpcChannel()
          .then((ch) => {
            if (!this.pending.has(correlationId)) return;
            ch.sendToQueue(queue, Buffer.from(body), {
              correlationId,
              replyTo: REPLY_TO,
              // Returned (basic.return) when no queue takes it: nobody serves the method (onReturned).
              mandatory: true,
              // The broker drops a request nobody took in time, so no server works on a dead call.
              expiration: String(Math.max(1, deadline - Date.now())),
              contentType: JSON_TYPE,
              type: method,
              headers: { ...traceHeaders, [HEADER.method]: method, [HEADER.deadline]: deadline },
            });
          })
          .catch((err: unknown) => this.logger.warn({ method, err: String(err) }, 'bus: rpc request not sent'));
      });
    });
  }

  async declareQueue(service: string, types: string[]): Promise<void> {
    this.assertOpen();
    const ch = await this.connection.createChannel();
    ch.on('error', () => undefined);
    try {
      const { plain, partitioned } = splitTypes(types, this.partitioning);
      await this.declareServiceQueue(ch, service, plain);
      if (partitioned.length > 0) for (let n = 0; n < this.partitioning.count; n += 1) await this.declarePartitionQueue(ch, service, n, partitioned);
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  /** A service's durable queue with its retry and dead-letter queues, bound to its types. */
  private async declareServiceQueue(ch: Channel, service: string, types: string[]): Promise<string> {
    const queue = this.names.serviceQueue(service);
    const deadQueue = this.names.deadLetterQueue(service);
    await ch.assertExchange(this.names.exchange, 'topic', { durable: true });
    await ch.assertQueue(deadQueue, { durable: true });
    await ch.assertQueue(this.names.retryQueue(service), { durable: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue } });
    // Anything the broker itself rejects or expires lands in the DLQ rather than vanishing.
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadQueue } });
    for (const type of types) await ch.bindQueue(queue, this.names.exchange, type);
    return queue;
  }

  /**
   * Partition `n` of a service's partitioned types: a single-active-consumer queue (the broker keeps
   * its order across consumers), its own retry queue, and the service's dead-letter queue.
   */
  private async declarePartitionQueue(ch: Channel, service: string, n: number, types: string[]): Promise<string> {
    const queue = this.names.partitionQueue(service, n);
    const deadQueue = this.names.deadLetterQueue(service);
    await ch.assertExchange(this.names.exchange, 'topic', { durable: true });
    await ch.assertQueue(deadQueue, { durable: true });
    await ch.assertQueue(this.names.partitionRetryQueue(service, n), { durable: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue } });
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-single-active-consumer': true, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadQueue } });
    for (const type of types) await ch.bindQueue(queue, this.names.exchange, this.names.partitionKey(type, n));
    return queue;
  }

  health(): BusHealth {
    if (this.closed) return { ok: false, detail: 'bus client closed' };
    if (!this.connected) return { ok: false, detail: 'connection to RabbitMQ lost; reconnecting' };
    const down = [...this.consumers].filter((c) => !c.isHealthy()).length;
    if (down > 0) return { ok: false, detail: `${down} consumer(s) not subscribed; resubscribing` };
    return { ok: true };
  }

  async queueStats(service: string, kinds: readonly QueueKind[]): Promise<QueueStat[]> {
    this.assertOpen();
    const partitionQueues = Array.from({ length: this.partitioning.count }, (_, n) => this.names.partitionQueue(service, n));
    const names: Record<QueueKind, string[]> = {
      main: [this.names.serviceQueue(service)],
      retry: [this.names.retryQueue(service)],
      dead_letter: [this.names.deadLetterQueue(service)],
      rpc: [this.names.rpcQueue(service)],
      partitioned: partitionQueues,
    };
    const stats: QueueStat[] = [];
    let ch: Channel | null = null;
    try {
      for (const queue of kinds) {
        let messages = 0;
        let consumers = 0;
        let exists = false;
        for (const name of names[queue]) {
          if (!ch) {
            ch = await this.connection.createChannel();
            ch.on('error', () => undefined);
          }
          try {
            const { messageCount, consumerCount } = await ch.checkQueue(name);
            messages += messageCount;
            consumers += consumerCount;
            exists = true;
          } catch {
            // The queue does not exist (404), which also closed the channel: the next one opens anew.
            ch = null;
          }
        }
        if (exists) stats.push({ service, queue, messages, consumers });
      }
    } finally {
      if (ch) await ch.close().catch(() => undefined);
    }
    return stats;
  }

  /** RabbitMQ holds the backlog and flow-controls publishers itself: nothing to refuse here. */
  async admit(): Promise<void> {
    this.assertOpen();
  }

  /** The queues live in RabbitMQ, not in this process: nothing to wait for. */
  async finishQueued(): Promise<number> {
    return 0;
  }

  async takeDeadLetters(service: string, max = 100): Promise<DeadLetter[]> {
    this.assertOpen();
    const queue = this.names.deadLetterQueue(service);
    const ch = await this.connection.createChannel();
    ch.on('error', () => undefined);
    try {
      await ch.assertQueue(queue, { durable: true });
      const letters: DeadLetter[] = [];
      while (letters.length < max) {
        const msg = await ch.get(queue, { noAck: false });
        if (msg === false) break;
        letters.push(decodeDeadLetter(msg.content.toString('utf8'), msg.properties.headers ?? {}));
        ch.ack(msg);
      }
      return letters;
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  /**
   * Redrive (redrive.ts) on RabbitMQ, on one confirm channel: the dead letters present when it starts
   * are fetched oldest first (basic.get, unacked), each one to move is published to its queue through
   * the default exchange (so it reaches that queue only, in the order fetched), and acked once its
   * publish is confirmed: a crash in between leaves it in both queues (the same id: consumers
   * deduplicate), never in neither. Letters kept, and in a dry run every letter, stay unacked until
   * the end and are then nacked with requeue, which RabbitMQ puts back in their original places, so
   * the queue's order is unchanged. Meanwhile they are invisible to other readers: a concurrent
   * redrive skips them rather than moving them twice. Only the letters there at the start are looked
   * at, so letters dead-lettered during a redrive (the cause is not fixed yet) are not chased.
   */
  async redriveDeadLetters(service: string, options: RedriveOptions = {}): Promise<RedriveResult> {
    this.assertOpen();
    const dryRun = options.dryRun ?? false;
    const max = redriveMax(options.max);
    const deadQueue = this.names.deadLetterQueue(service);
    const tally = new RedriveTally(service, dryRun);
    const target = { service, names: this.names, partitions: this.partitioning };
    const present = await this.queueLength(deadQueue);
    if (present === null) return tally.result(0);
    const exists = new Map<string, Promise<boolean>>();
    const queueExists = (queue: string): Promise<boolean> => {
      let known = exists.get(queue);
      if (!known) {
        known = this.queueLength(queue).then((n) => n !== null);
        exists.set(queue, known);
      }
      return known;
    };
    const ch = await this.connection.createConfirmChannel();
    ch.on('error', (err: Error) => this.logger.warn({ service, err: err.message }, 'bus: redrive channel error'));
    let batch: { msg: Message; confirmed: Promise<void> }[] = [];
    const settle = async (): Promise<void> => {
      const sent = batch;
      batch = [];
      // Acked only once confirmed; a failure leaves the rest unacked, so they return to the dead-letter queue.
      for (const { msg, confirmed } of sent) {
        await confirmed;
        ch.ack(msg);
      }
    };
    try {
      let looked = 0;
      while (tally.movedCount < max && looked < present) {
        const msg = await ch.get(deadQueue, { noAck: false });
        if (msg === false) break;
        looked += 1;
        // The broker's own x-death records still on: they may tell the partition (the plan drops them).
        const plan = planRedrive(msg.content.toString('utf8'), (msg.properties.headers ?? {}) as Record<string, unknown>, target);
        if (plan.kind === 'keep') {
          tally.keep(plan.cause);
          continue;
        }
        if (!(await queueExists(plan.queue))) {
          tally.keep('no queue');
          continue;
        }
        tally.move(plan);
        if (dryRun) continue;
        const confirmed = confirmPublish(ch, '', plan.queue, msg.content, {
          persistent: true,
          contentType: JSON_TYPE,
          messageId: (msg.properties.messageId as string | undefined) ?? plan.id,
          type: (msg.properties.type as string | undefined) ?? plan.type,
          appId: msg.properties.appId as string | undefined,
          timestamp: msg.properties.timestamp as number | undefined,
          headers: plan.headers,
        });
        // Nobody waits on it until settle(): a refusal is seen there.
        confirmed.catch(() => undefined);
        batch.push({ msg, confirmed });
        if (batch.length >= 100) await settle();
      }
      await settle();
      // Kept letters (every letter, on a dry run) back in their places, in order.
      ch.nackAll(true);
    } finally {
      // Anything still unacked (a failure midway) also returns to the dead-letter queue.
      await ch.close().catch(() => undefined);
    }
    if (!dryRun && tally.movedCount > 0) this.logger.info({ service, moved: tally.movedCount }, 'bus: dead letters redriven to their service queue');
    return tally.result((await this.queueLength(deadQueue)) ?? 0);
  }

  /** Messages ready in a queue (a passive declare), or null when it does not exist. */
  private async queueLength(queue: string): Promise<number | null> {
    const ch = await this.connection.createChannel();
    ch.on('error', () => undefined);
    try {
      return (await ch.checkQueue(queue)).messageCount;
    } catch {
      // 404: the queue does not exist (and the channel is closed).
      return null;
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.stops) stop.abort();
    this.stops.clear();
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(new BusClosedError());
    }
    this.pending.clear();
    for (const balancer of this.balancers) balancer.halt();
    for (const consumer of this.consumers) consumer.stop();
    this.consumers.clear();
    // Closing the connection hands unacked deliveries back to the broker for redelivery.
    await this.connection.close().catch((err: unknown) => this.logger.warn({ err: String(err) }, 'bus: close failed'));
  }

  private host(): ConsumerHost {
    return { connection: this.connection, logger: this.logger, isClosed: () => this.closed };
  }

  private async startConsumer(consumer: AmqpConsumer): Promise<void> {
    this.consumers.add(consumer);
    consumer.onStopped = () => this.consumers.delete(consumer);
    try {
      await consumer.start();
    } catch (err) {
      consumer.stop();
      throw err;
    }
  }

  /** `partition`: the partition whose queue `msg` came from, recorded on a dead letter so a redrive puts it back there. */
  private async handleEvent(ch: ConfirmChannel, msg: ConsumeMessage, policy: DeliveryPolicy, retryQueue: string, deadQueue: string, partition?: number): Promise<void> {
    const service = policy.service;
    const headers = copyHeaders(msg.properties.headers);
    const outcome = await settleDelivery(msg.content.toString('utf8'), failuresFrom(headers, HEADER.failures), policy, headers);
    // Stopped while a store was out of reach: back to its queue as it was, no attempt spent.
    if (outcome.kind === 'requeue') {
      ch.nack(msg, false, true);
      return;
    }
    const props: Options.Publish = {
      persistent: true,
      contentType: JSON_TYPE,
      messageId: msg.properties.messageId as string | undefined,
      type: msg.properties.type as string | undefined,
      appId: msg.properties.appId as string | undefined,
    };
    if (outcome.kind === 'retry') {
      await confirmPublish(ch, '', retryQueue, msg.content, {
        ...props,
        headers: { ...headers, [HEADER.failures]: outcome.attempts },
        expiration: String(Math.max(1, outcome.delayMs)),
      });
      this.metrics.count('retried', service);
    } else if (outcome.kind === 'dead') {
      await confirmPublish(ch, '', deadQueue, msg.content, {
        ...props,
        headers: { ...headers, [HEADER.failures]: outcome.attempts, [HEADER.reason]: outcome.reason, ...(partition === undefined ? {} : { [PARTITION_HEADER]: partition }) },
      });
      this.metrics.count('dead_lettered', service);
    } else {
      this.metrics.count('consumed', service);
    }
    // Only now: the retry or dead letter is safely with the broker.
    ch.ack(msg);
  }

  private getPublisher(): Promise<ConfirmChannel> {
    if (!this.publisher) {
      const opening = (async () => {
        const ch = await this.connection.createConfirmChannel();
        ch.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'bus: publish channel error'));
        ch.on('close', () => {
          if (this.publisher === opening) this.publisher = null;
        });
        ch.on('return', (msg: Message) => {
          this.metrics.count('unroutable', String(msg.properties.appId ?? 'unknown'));
          // Legal (the consuming service may not be deployed), so debug level; the metric counts it.
          this.logger.debug({ type: msg.fields.routingKey, id: msg.properties.messageId }, 'bus: message unroutable (no consumer queue bound to its type); dropped');
        });
        await ch.assertExchange(this.names.exchange, 'topic', { durable: true });
        return ch;
      })();
      this.publisher = opening;
      opening.catch(() => {
        if (this.publisher === opening) this.publisher = null;
      });
    }
    return this.publisher;
  }

  private getRpcChannel(): Promise<Channel> {
    if (!this.rpcChannel) {
      const opening = (async () => {
        const ch = await this.connection.createChannel();
        ch.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'bus: rpc channel error'));
        // Replies go to this channel only; calls still waiting on a closed one end at their deadline.
        ch.on('close', () => {
          if (this.rpcChannel === opening) this.rpcChannel = null;
        });
        ch.on('return', (msg: Message) => this.onReturned(msg));
        await ch.consume(REPLY_TO, (msg) => msg && this.onReply(msg), { noAck: true });
        return ch;
      })();
      this.rpcChannel = opening;
      opening.catch(() => {
        if (this.rpcChannel === opening) this.rpcChannel = null;
      });
    }
    return this.rpcChannel;
  }

  /** A request the broker could not route: its service's queue is gone, so no consumer serves it. */
  private onReturned(msg: Message): void {
    const correlationId: unknown = msg.properties.correlationId;
    const call = typeof correlationId === 'string' ? this.pending.get(correlationId) : undefined;
    if (!call || typeof correlationId !== 'string') return;
    this.pending.delete(correlationId);
    clearTimeout(call.timer);
    call.reject(new RpcNoConsumerError(call.method, call.service));
  }

  private onReply(msg: ConsumeMessage): void {
    const correlationId: unknown = msg.properties.correlationId;
    const call = typeof correlationId === 'string' ? this.pending.get(correlationId) : undefined;
    if (!call || typeof correlationId !== 'string') return; // late reply to a call that already timed out
    this.pending.delete(correlationId);
    clearTimeout(call.timer);
    try {
      call.resolve(readRpcReply(call.method, msg.content.toString('utf8'), this.validator));
    } catch (err) {
      call.reject(err as Error);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new BusClosedError();
  }
}

interface ConsumerSetup {
  /** Declares the topology and returns the queue to consume. */
  declare(ch: ConfirmChannel): Promise<string>;
  /** Settles the message (ack, or republish then ack); a throw leaves it to the broker. */
  handle(ch: ConfirmChannel, msg: ConsumeMessage): Promise<void>;
  /**
   * A partition (single-active-consumer queue): order is the broker's to keep, so this consumer
   * never nacks ahead of what it started. Handing on and draining finish what started and close the
   * channel, which returns every unstarted delivery to its place for the next consumer in line.
   */
  singleActive?: { partition: number; shouldYield(): boolean; yieldNow(): void };
}

/** One consumer on its own confirm channel; re-subscribes after the channel or connection drops. */
class AmqpConsumer implements Consumer {
  private channel: ConfirmChannel | null = null;
  private consumerTag: string | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private state: 'running' | 'draining' | 'stopped' = 'running';
  /** Partitions only: deliveries are held, not started, while the partition is handed on or drained. */
  private paused = false;
  /** Partitions only: a handover is under way (letting go, then subscribing again). */
  private yielding = false;
  private restartDelay = 100;
  private restartTimer: NodeJS.Timeout | null = null;
  onStopped: () => void = () => undefined;

  constructor(
    private readonly host: ConsumerHost,
    private readonly prefetch: number,
    private readonly setup: ConsumerSetup,
  ) {}

  async start(): Promise<void> {
    const ch = await this.host.connection.createConfirmChannel();
    ch.on('error', (err: Error) => this.host.logger.warn({ err: err.message }, 'bus: consumer channel error'));
    ch.on('close', () => {
      if (this.channel !== ch) return;
      this.channel = null;
      this.consumerTag = null;
      this.scheduleRestart();
    });
    try {
      await ch.prefetch(this.prefetch);
      const queue = await this.setup.declare(ch);
      this.channel = ch;
      const { consumerTag } = await ch.consume(queue, (msg) => this.onMessage(ch, msg), { noAck: false });
      this.consumerTag = consumerTag;
      this.restartDelay = 100;
    } catch (err) {
      this.channel = null;
      await ch.close().catch(() => undefined);
      throw err;
    }
    if (this.state !== 'running') await ch.close().catch(() => undefined);
  }

  get partition(): number {
    return this.setup.singleActive?.partition ?? -1;
  }

  /** Hands a partition on: finish what started, return the rest in place, queue up again at the back. */
  async yieldTurn(): Promise<void> {
    if (!this.setup.singleActive || this.yielding || this.state !== 'running') return;
    this.yielding = true;
    try {
      await this.letGo();
      // The old channel is closed: whatever the new one is delivered (at once, if the broker makes
      // it active while it subscribes) is this consumer's to start. Held, it would sit unacked on
      // the new channel until that closed, while later messages of its keys went ahead.
      this.paused = false;
      if (this.state === 'running') {
        try {
          await this.start();
        } catch (err) {
          this.host.logger.warn({ err: String(err) }, 'bus: partition resubscribe failed; retrying');
          this.scheduleRestart();
        }
      }
    } finally {
      this.yielding = false;
    }
  }

  /** Stops starting deliveries, waits for the started ones, then closes the channel (unacked ones return in place). */
  private async letGo(): Promise<void> {
    this.paused = true;
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    const ch = this.channel;
    this.channel = null;
    this.consumerTag = null;
    if (ch) await ch.close().catch(() => undefined);
  }

  async drain(): Promise<void> {
    if (this.setup.singleActive) {
      if (this.state === 'running') {
        this.state = 'draining';
        this.clearRestart();
        await this.letGo();
        this.state = 'stopped';
        this.onStopped();
      }
      return;
    }
    if (this.state === 'running') {
      this.state = 'draining';
      this.clearRestart();
      const ch = this.channel;
      if (ch && this.consumerTag) await ch.cancel(this.consumerTag).catch(() => undefined);
    }
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    const ch = this.channel;
    this.channel = null;
    if (ch) await ch.close().catch(() => undefined);
    this.state = 'stopped';
    this.onStopped();
  }

  isHealthy(): boolean {
    // Draining on purpose is not a failure; a running consumer without a channel is.
    return this.state !== 'running' || this.channel !== null;
  }

  /** Stops without waiting (the bus is closing its connection). */
  stop(): void {
    this.state = 'stopped';
    this.clearRestart();
    this.channel = null;
  }

  private onMessage(ch: ConfirmChannel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled us (queue deleted): declare again and resubscribe.
      this.host.logger.warn('bus: consumer cancelled by the broker; resubscribing');
      if (this.channel === ch) {
        this.channel = null;
        void ch.close().catch(() => undefined);
        this.scheduleRestart();
      }
      return;
    }
    const turn = this.setup.singleActive;
    if (turn) {
      // Held: closing the channel gives it back in its place, behind nothing it should follow.
      if (this.paused || this.state !== 'running') return;
      if (turn.shouldYield()) {
        turn.yieldNow();
        return;
      }
    } else if (this.state !== 'running') {
      // Arrived while draining: hand it back for another consumer.
      safely(() => ch.nack(msg, false, true));
      return;
    }
    const run = this.setup
      .handle(ch, msg)
      .catch((err: unknown) => {
        // The channel died or the broker refused the republish: without an ack the broker redelivers.
        this.host.logger.warn({ err: String(err) }, 'bus: could not settle a message; it will be redelivered');
        safely(() => ch.nack(msg, false, true));
      })
      .finally(() => this.inflight.delete(run));
    this.inflight.add(run);
  }

  private scheduleRestart(): void {
    if (this.state !== 'running' || this.host.isClosed() || this.restartTimer) return;
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, 10_000);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.state !== 'running' || this.host.isClosed()) return;
      this.start().catch((err: unknown) => {
        this.host.logger.warn({ err: String(err) }, 'bus: resubscribe failed; retrying');
        this.scheduleRestart();
      });
    }, delay);
  }

  private clearRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }
}

function confirmPublish(ch: ConfirmChannel, exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    try {
      ch.publish(exchange, routingKey, content, options, (err: unknown) =>
        err ? reject(err instanceof Error ? err : new Error(`broker refused the message: ${String(err)}`)) : resolve(),
      );
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

// Broker-written dead-letter headers must not be sent back by a client.
function copyHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key === 'x-death' || key.startsWith('x-first-death-') || key.startsWith('x-last-death-')) continue;
    out[key] = value;
  }
  return out;
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // The channel is already closed; the broker requeues on its own.
  }
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable url>';
  }
}
