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
  /**
   * The validator this body passed when it was published. In-process only (never a header): a
   * consumer holding the same validator need not check the same bytes again.
   */
  checkedBy?: object;
  /**
   * The body already parsed by the publisher (its JSON form, nobody else's): handed to the first
   * queue the message is routed to and taken by its first delivery; every other copy, and any
   * redelivery, parses the body.
   */
  parsed?: unknown;
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
  /** Body characters of the ready messages. */
  readyChars = 0;
  readonly subscriptions: Subscription[] = [];
  private next = 0;

  /** `singleActive`: as RabbitMQ's x-single-active-consumer, only the first subscriber in line gets messages. */
  constructor(readonly name: string, readonly singleActive = false) {}

  pickSubscription(): Subscription | undefined {
    if (this.singleActive) {
      const first = this.subscriptions[0];
      return first && first.unacked.size < first.prefetch ? first : undefined;
    }
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
  private readonly listeners = new Map<string, Set<(note: unknown) => void>>();
  private tagSeq = 0;
  private readonly roomWaiters: { limit: number; resolve(): void }[] = [];

  /** The process-wide broker of that name (created on first use). */
  static named(name = 'default'): MemoryBroker {
    let broker = brokers.get(name);
    if (!broker) {
      broker = new MemoryBroker();
      brokers.set(name, broker);
    }
    return broker;
  }

  assertQueue(name: string, options: { singleActive?: boolean } = {}): void {
    if (!this.queues.has(name)) this.queues.set(name, new MemoryQueue(name, options.singleActive ?? false));
  }

  /**
   * A fan-out channel (as a topic exchange with one exclusive queue per listener): every listener
   * of `key` hears every note sent on it, asynchronously. Partitioned consumers announce themselves here.
   */
  listen(key: string, onNote: (note: unknown) => void): { send(note: unknown): void; close(): void } {
    let listeners = this.listeners.get(key);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(key, listeners);
    }
    listeners.add(onNote);
    return {
      send: (note) => {
        for (const listener of this.listeners.get(key) ?? []) setImmediate(() => listener(note));
      },
      close: () => {
        this.listeners.get(key)?.delete(onNote);
      },
    };
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
      if ([...patterns].some((p) => topicMatches(p, routingKey)) && this.sendToQueue(queue, routed === 0 ? { ...message } : { ...message, parsed: undefined })) routed += 1;
    }
    return routed;
  }

  /** Like the default exchange: false when the queue does not exist (the message is dropped). */
  sendToQueue(name: string, message: StoredMessage): boolean {
    const queue = this.queues.get(name);
    if (!queue) return false;
    // Expired requests at the head of an unconsumed queue go, as RabbitMQ drops them there.
    const now = Date.now();
    while (queue.ready.length > 0 && (queue.ready[0]?.expiresAt ?? Infinity) <= now) this.leave(queue, queue.ready.shift() as StoredMessage);
    queue.ready.push({ ...message, headers: { ...message.headers } });
    queue.readyChars += message.body.length;
    this.pump(queue);
    return true;
  }

  /**
   * Resolves once the messages waiting to be delivered to this broker's consumers hold fewer than
   * `limit` body characters. The in-process bus keeps everything in memory, so publishers at the edge
   * (an API request, a tracker hit) wait for the consumers to catch up rather than grow the process.
   * Queues nobody consumes (dead letters, a service this process does not run) do not count: waiting
   * would not empty them.
   */
  waitForRoom(limit: number): Promise<void> {
    if (this.backlogChars() < limit) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push({ limit, resolve }));
  }

  /** Body characters waiting in queues that have consumers. */
  backlogChars(): number {
    let total = 0;
    for (const queue of this.queues.values()) if (queue.subscriptions.length > 0) total += queue.readyChars;
    return total;
  }

  /** A message left a ready list (delivered, taken or expired): wake publishers there is room for. */
  private leave(queue: MemoryQueue, message: StoredMessage): void {
    queue.readyChars -= message.body.length;
    this.wake();
  }

  private wake(): void {
    if (this.roomWaiters.length === 0) return;
    const backlog = this.backlogChars();
    for (let i = this.roomWaiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.roomWaiters[i] as { limit: number; resolve(): void };
      if (backlog < waiter.limit) {
        this.roomWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
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
    // A queue left without consumers no longer counts as backlog anyone waits for.
    this.wake();
  }

  /** Cancels and hands every unacked message back to the front of its queue. */
  disconnect(sub: Subscription): void {
    this.cancel(sub);
    const returned = [...sub.unacked.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => ({ ...m, redelivered: true }));
    sub.unacked.clear();
    sub.queue.ready.unshift(...returned);
    for (const m of returned) sub.queue.readyChars += m.body.length;
    this.pump(sub.queue);
  }

  /** Drops a queue's oldest ready messages until its bodies hold at most `maxChars`; returns how many. */
  trim(queueName: string, maxChars: number): number {
    const queue = this.queues.get(queueName);
    let dropped = 0;
    while (queue && queue.readyChars > maxChars && queue.ready.length > 1) {
      this.leave(queue, queue.ready.shift() as StoredMessage);
      dropped += 1;
    }
    return dropped;
  }

  /** Ready messages and subscribed consumers of a queue; null when it does not exist. */
  queueStats(queueName: string): { messages: number; consumers: number } | null {
    const queue = this.queues.get(queueName);
    return queue ? { messages: queue.ready.length, consumers: queue.subscriptions.length } : null;
  }

  /** Takes the next ready message off a queue, as basic.get with an immediate ack. */
  take(queueName: string): StoredMessage | undefined {
    const queue = this.queues.get(queueName);
    const message = queue?.ready.shift();
    if (queue && message) this.leave(queue, message);
    return message;
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
      this.leave(queue, message);
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
          queue.readyChars += message.body.length;
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
