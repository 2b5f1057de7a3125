// The in-process driver: same topology, routing, ack/retry/dead-letter and RPC semantics as
// the RabbitMQ driver, on a MemoryBroker shared by the clients of one process.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { busMetrics, type BusMetrics } from './bus-metrics';
import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_PREFETCH,
  DEFAULT_RETRY_DELAY_MS,
  failuresFrom,
  settleDelivery,
  type DeliveryPolicy,
} from './delivery';
import { decodeDeadLetter, encodeEnvelope } from './envelope';
import { MemoryBroker, type Settler, type StoredMessage, type Subscription } from './memory-broker';
import { busNames, DEFAULT_NAMESPACE, HEADER, rpcServiceOf, type BusNames } from './names';
import { answerRpc, encodeRpcRequest, readRpcReply } from './rpc-wire';
import {
  BusClosedError,
  RpcTimeoutError,
  type Bus,
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  type Envelope,
  type MessageValidator,
  type PublishInput,
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
}

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
  private readonly names: BusNames;
  private readonly validator: MessageValidator;
  private readonly logger: Logger;
  private readonly metrics: BusMetrics;
  private readonly consumers = new Set<MemoryConsumer>();
  private readonly pending = new Map<string, PendingCall>();
  private readonly replyTarget = `reply.${randomUUID()}`;
  private closed = false;

  constructor(options: MemoryBusOptions) {
    this.broker = options.broker instanceof MemoryBroker ? options.broker : MemoryBroker.named(options.broker);
    this.names = busNames(options.namespace ?? DEFAULT_NAMESPACE);
    this.validator = options.validator;
    this.logger = options.logger;
    this.metrics = busMetrics(options.metrics);
    this.broker.openReplyTarget(this.replyTarget, (m) => this.onReply(m));
  }

  async publish<P>(input: PublishInput<P>): Promise<Envelope<P>> {
    const [envelope] = await this.publishMany([input]);
    return envelope as Envelope<P>;
  }

  async publishMany(inputs: PublishInput[]): Promise<Envelope[]> {
    this.assertOpen();
    // Validate all before sending any, as the AMQP driver does.
    const encoded = inputs.map((input) => encodeEnvelope(input, this.validator));
    for (const { envelope, body } of encoded) {
      const routed = this.broker.publish(this.names.exchange, envelope.type, { body, headers: {}, redelivered: false, expiresAt: null });
      this.metrics.count('published', envelope.source);
      if (routed === 0) {
        this.metrics.count('unroutable', envelope.source);
        // Legal (the consuming service may not be deployed), so debug level; the metric counts it.
        this.logger.debug({ type: envelope.type, id: envelope.id }, 'bus: message unroutable (no consumer queue bound to its type); dropped');
      }
    }
    await Promise.resolve();
    return encoded.map((e) => e.envelope);
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    const { service } = options;
    const queue = this.declareServiceQueue(service, options.types);
    const policy: DeliveryPolicy = {
      handler: options.handler,
      validator: this.validator,
      maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      logger: this.logger,
      service,
    };
    const consumer = new MemoryConsumer(this.broker, queue, options.prefetch ?? DEFAULT_PREFETCH, (message, settler) =>
      this.handleEvent(service, policy, message, settler),
    );
    this.track(consumer);
    return consumer;
  }

  async declareQueue(service: string, types: string[]): Promise<void> {
    this.assertOpen();
    this.declareServiceQueue(service, types);
  }

  private declareServiceQueue(service: string, types: string[]): string {
    const queue = this.names.serviceQueue(service);
    this.broker.assertQueue(this.names.deadLetterQueue(service));
    this.broker.assertQueue(queue);
    for (const type of types) this.broker.bind(this.names.exchange, queue, type);
    return queue;
  }

  async serveRpc(options: ServeRpcOptions): Promise<Consumer> {
    this.assertOpen();
    const ctx = { methods: options.methods, validator: this.validator, logger: this.logger, service: options.service };
    const consumer = new MemoryConsumer(this.broker, this.names.rpcQueue(options.service), options.prefetch ?? DEFAULT_PREFETCH, async (message, settler) => {
      const method = String(message.headers[HEADER.method] ?? '');
      const deadline = Number(message.headers[HEADER.deadline] ?? 0);
      if (deadline > 0 && Date.now() > deadline) {
        this.logger.debug({ method }, 'bus: rpc request past its deadline; skipped');
      } else if (message.replyTo && message.correlationId) {
        const body = await answerRpc(method, message.body, ctx);
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
    const body = encodeRpcRequest(method, request, this.validator);
    const timeoutMs = options?.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    const correlationId = randomUUID();
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        reject(new RpcTimeoutError(method, timeoutMs));
      }, timeoutMs);
      this.pending.set(correlationId, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      const sent = this.broker.sendToQueue(this.names.rpcQueue(service), {
        body,
        headers: { [HEADER.method]: method, [HEADER.deadline]: Date.now() + timeoutMs },
        redelivered: false,
        expiresAt: Date.now() + timeoutMs,
        correlationId,
        replyTo: this.replyTarget,
      });
      // Same as on RabbitMQ: nobody serves it, so the deadline answers.
      if (!sent) this.logger.debug({ method }, 'bus: no queue serves this rpc method yet');
    });
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const consumer of this.consumers) consumer.disconnect();
    this.consumers.clear();
    this.broker.closeReplyTarget(this.replyTarget);
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(new BusClosedError());
    }
    this.pending.clear();
  }

  private track(consumer: MemoryConsumer): void {
    this.consumers.add(consumer);
    consumer.onDrained = () => this.consumers.delete(consumer);
  }

  private async handleEvent(service: string, policy: DeliveryPolicy, message: StoredMessage, settler: Settler): Promise<void> {
    const previous = failuresFrom(message.headers, HEADER.failures);
    const outcome = await settleDelivery(message.body, previous, policy);
    // The client closed while the handler ran: the broker already took the message back.
    if (!settler.outstanding) return;
    if (outcome.kind === 'ack') {
      this.metrics.count('consumed', service);
    } else if (outcome.kind === 'retry') {
      this.metrics.count('retried', service);
      const retry: StoredMessage = { body: message.body, headers: { ...message.headers, [HEADER.failures]: outcome.attempts }, redelivered: false, expiresAt: null };
      const queue = this.names.serviceQueue(service);
      // The broker owns the timer, so a retry survives this client closing.
      this.broker.later(outcome.delayMs, () => this.broker.sendToQueue(queue, retry));
    } else {
      this.metrics.count('dead_lettered', service);
      this.broker.sendToQueue(this.names.deadLetterQueue(service), {
        body: message.body,
        headers: { ...message.headers, [HEADER.failures]: outcome.attempts, [HEADER.reason]: outcome.reason },
        redelivered: false,
        expiresAt: null,
      });
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
}
