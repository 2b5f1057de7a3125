// The in-process broker: a topic exchange per namespace, queues with competing consumers,
// prefetch, acks and redelivery. MemoryBus clients connect to one; closing a client hands its
// unacked messages back to their queues, which is what a consumer crash looks like here.

export interface StoredMessage {
  body: string;
  headers: Record<string, string | number>;
  redelivered: boolean;
  /** Epoch ms after which the message is dropped instead of delivered (RPC deadlines). */
  expiresAt: number | null;
  correlationId?: string;
  replyTo?: string;
}

export type DeliverFn = (message: StoredMessage, settle: Settler) => void;

/** One delivery's handle; every method is a no-op once the delivery is no longer outstanding. */
export interface Settler {
  /** Still unacked by this subscription (false once the client closed). */
  readonly outstanding: boolean;
  ack(): void;
  requeue(): void;
}

class MemoryQueue {
  readonly ready: StoredMessage[] = [];
  readonly subscriptions: Subscription[] = [];
  private next = 0;

  constructor(readonly name: string) {}

  pickSubscription(): Subscription | undefined {
    const n = this.subscriptions.length;
    for (let i = 0; i < n; i += 1) {
      const sub = this.subscriptions[(this.next + i) % n];
      if (sub && sub.unacked.size < sub.prefetch) {
        this.next = (this.next + i + 1) % n;
        return sub;
      }
    }
    return undefined;
  }
}

export class Subscription {
  readonly unacked = new Map<number, StoredMessage>();
  constructor(
    readonly queue: MemoryQueue,
    readonly prefetch: number,
    readonly deliver: DeliverFn,
  ) {}
}

const brokers = new Map<string, MemoryBroker>();

export class MemoryBroker {
  private readonly queues = new Map<string, MemoryQueue>();
  /** exchange → queue → binding patterns */
  private readonly bindings = new Map<string, Map<string, Set<string>>>();
  private readonly replyTargets = new Map<string, (message: StoredMessage) => void>();
  private tagSeq = 0;

  /** The process-wide broker of that name (created on first use). */
  static named(name = 'default'): MemoryBroker {
    let broker = brokers.get(name);
    if (!broker) {
      broker = new MemoryBroker();
      brokers.set(name, broker);
    }
    return broker;
  }

  assertQueue(name: string): void {
    if (!this.queues.has(name)) this.queues.set(name, new MemoryQueue(name));
  }

  bind(exchange: string, queue: string, pattern: string): void {
    this.assertQueue(queue);
    let byQueue = this.bindings.get(exchange);
    if (!byQueue) {
      byQueue = new Map();
      this.bindings.set(exchange, byQueue);
    }
    let patterns = byQueue.get(queue);
    if (!patterns) {
      patterns = new Set();
      byQueue.set(queue, patterns);
    }
    patterns.add(pattern);
  }

  /** Routes one copy to every bound queue; returns how many queues got it (0 = unroutable). */
  publish(exchange: string, routingKey: string, message: StoredMessage): number {
    let routed = 0;
    for (const [queue, patterns] of this.bindings.get(exchange) ?? []) {
      if ([...patterns].some((p) => topicMatches(p, routingKey)) && this.sendToQueue(queue, { ...message })) routed += 1;
    }
    return routed;
  }

  /** Like the default exchange: false when the queue does not exist (the message is dropped). */
  sendToQueue(name: string, message: StoredMessage): boolean {
    const queue = this.queues.get(name);
    if (!queue) return false;
    // Expired requests at the head of an unconsumed queue go, as RabbitMQ drops them there.
    const now = Date.now();
    while (queue.ready.length > 0 && (queue.ready[0]?.expiresAt ?? Infinity) <= now) queue.ready.shift();
    queue.ready.push({ ...message, headers: { ...message.headers } });
    this.pump(queue);
    return true;
  }

  /** Runs `fn` after `ms` without keeping the process alive for it. */
  later(ms: number, fn: () => void): void {
    setTimeout(fn, ms).unref();
  }

  subscribe(queueName: string, prefetch: number, deliver: DeliverFn): Subscription {
    this.assertQueue(queueName);
    const queue = this.queues.get(queueName) as MemoryQueue;
    const sub = new Subscription(queue, Math.max(1, prefetch), deliver);
    queue.subscriptions.push(sub);
    this.pump(queue);
    return sub;
  }

  /** Stops new deliveries; outstanding ones can still be settled. */
  cancel(sub: Subscription): void {
    const list = sub.queue.subscriptions;
    const i = list.indexOf(sub);
    if (i >= 0) list.splice(i, 1);
  }

  /** Cancels and hands every unacked message back to the front of its queue. */
  disconnect(sub: Subscription): void {
    this.cancel(sub);
    const returned = [...sub.unacked.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => ({ ...m, redelivered: true }));
    sub.unacked.clear();
    sub.queue.ready.unshift(...returned);
    this.pump(sub.queue);
  }

  /** Takes the next ready message off a queue, as basic.get with an immediate ack. */
  take(queueName: string): StoredMessage | undefined {
    return this.queues.get(queueName)?.ready.shift();
  }

  /** Direct reply-to: a per-client mailbox that exists while the client is open. */
  openReplyTarget(id: string, onReply: (message: StoredMessage) => void): void {
    this.replyTargets.set(id, onReply);
  }

  closeReplyTarget(id: string): void {
    this.replyTargets.delete(id);
  }

  reply(target: string, message: StoredMessage): void {
    const onReply = this.replyTargets.get(target);
    // Asynchronous like a network hop; a closed caller just never hears back.
    if (onReply) setImmediate(() => onReply(message));
  }

  private pump(queue: MemoryQueue): void {
    while (queue.ready.length > 0) {
      const sub = queue.pickSubscription();
      if (!sub) return;
      const message = queue.ready.shift() as StoredMessage;
      if (message.expiresAt !== null && message.expiresAt <= Date.now()) continue;
      const tag = ++this.tagSeq;
      sub.unacked.set(tag, message);
      const settler: Settler = {
        get outstanding() {
          return sub.unacked.has(tag);
        },
        ack: () => {
          if (sub.unacked.delete(tag)) this.pump(queue);
        },
        requeue: () => {
          if (!sub.unacked.delete(tag)) return;
          queue.ready.unshift({ ...message, redelivered: true });
          this.pump(queue);
        },
      };
      // Delivered on a later tick, as over a socket; skipped if the client closed meanwhile.
      setImmediate(() => {
        if (settler.outstanding) sub.deliver(message, settler);
      });
    }
  }
}

/** AMQP topic matching: words split on '.', '*' is one word, '#' is zero or more. */
export function topicMatches(pattern: string, key: string): boolean {
  return matchWords(pattern.split('.'), 0, key.split('.'), 0);
}

function matchWords(p: string[], i: number, k: string[], j: number): boolean {
  if (i === p.length) return j === k.length;
  const word = p[i];
  if (word === '#') {
    for (let skip = j; skip <= k.length; skip += 1) if (matchWords(p, i + 1, k, skip)) return true;
    return false;
  }
  if (j === k.length) return false;
  return (word === '*' || word === k[j]) && matchWords(p, i + 1, k, j + 1);
}
