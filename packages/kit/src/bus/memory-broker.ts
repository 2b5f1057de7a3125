// The in-process broker: a topic exchange per namespace, queues with competing consumers,
// prefetch, acks and redelivery. MemoryBus clients connect to one; closing a client hands its
// unacked messages back to their queues, which is what a consumer crash looks like here.
// A broker opened on a directory (MemoryBroker.durable) keeps its durable queues in a journal
// there (journal.ts): a message is stored before its publish is confirmed and removed when acked,
// and the next broker opened on that directory delivers again whatever was not acked.
import { resolve } from 'node:path';
import { BusJournal, type JournalRecord } from './journal';

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
  /** The message's key in the journal, when it sits in a durable queue of a durable broker. */
  seq?: number;
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

  /** As RabbitMQ's x-single-active-consumer: only the first subscriber in line gets messages. */
  singleActive = false;
  /** Its messages are journalled (when the broker has a journal). */
  durable = false;

  constructor(readonly name: string) {}

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

export interface QueueOptions {
  singleActive?: boolean;
  /** Journal its messages: service, partition and dead-letter queues are durable; RPC queues are not. */
  durable?: boolean;
}

export class MemoryBroker {
  private readonly queues = new Map<string, MemoryQueue>();
  /** exchange → queue → binding patterns */
  private readonly bindings = new Map<string, Map<string, Set<string>>>();
  private readonly replyTargets = new Map<string, (message: StoredMessage) => void>();
  private readonly listeners = new Map<string, Set<(note: unknown) => void>>();
  private tagSeq = 0;
  private readonly roomWaiters: { limit: number; resolve(room: boolean): void }[] = [];
  /** The journal's next key is above every key it holds. */
  private journalSeq = 0;
  /** Messages the journal held at open, by queue, until their queue is declared durable again. */
  private readonly replayed = new Map<string, JournalRecord[]>();
  /** Retries waiting for their delay. */
  private readonly timers = new Set<NodeJS.Timeout>();
  private clients = 0;
  private registeredAs: string | null = null;

  constructor(readonly journal: BusJournal | null = null) {
    if (!journal) return;
    for (const record of journal.replay()) {
      this.journalSeq = Math.max(this.journalSeq, record.seq);
      const list = this.replayed.get(record.queue) ?? [];
      list.push(record);
      this.replayed.set(record.queue, list);
    }
  }

  /** The process-wide broker of that name (created on first use), held in memory only. */
  static named(name = 'default'): MemoryBroker {
    let broker = brokers.get(name);
    if (!broker) {
      broker = new MemoryBroker();
      brokers.set(name, broker);
    }
    return broker;
  }

  /**
   * The process-wide durable broker of a directory: opened (and its journal replayed) by its first
   * client, closed with its journal when its last client closes, so the next open replays again.
   */
  static durable(dir: string): MemoryBroker {
    const key = `journal:${resolve(dir)}`;
    let broker = brokers.get(key);
    if (!broker) {
      broker = new MemoryBroker(BusJournal.open(resolve(dir)));
      broker.registeredAs = key;
      brokers.set(key, broker);
    }
    return broker;
  }

  /** A bus client starts using this broker. */
  attach(): void {
    this.clients += 1;
  }

  /** A bus client is done with it; the last one closes a durable broker's journal. */
  async detach(): Promise<void> {
    this.clients -= 1;
    if (this.clients > 0 || !this.journal) return;
    if (this.registeredAs) brokers.delete(this.registeredAs);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.journal.close();
  }

  assertQueue(name: string, options: QueueOptions = {}): void {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new MemoryQueue(name);
      this.queues.set(name, queue);
    }
    if (options.singleActive) queue.singleActive = true;
    if (options.durable && this.journal && !queue.durable) {
      queue.durable = true;
      this.restore(queue);
    }
  }

  /** A durable queue declared again after a restart gets back what the journal kept for it, in order. */
  private restore(queue: MemoryQueue): void {
    const records = this.replayed.get(queue.name);
    if (!records) return;
    this.replayed.delete(queue.name);
    for (const record of records) {
      const message: StoredMessage = { body: record.body, headers: record.headers, redelivered: true, expiresAt: null, seq: record.seq };
      const wait = (record.notBefore ?? 0) - Date.now();
      if (wait > 0) this.after(wait, () => this.enqueue(queue, message));
      else this.enqueue(queue, message, false);
    }
    this.pump(queue);
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

  /**
   * Routes one copy to every bound queue; returns how many queues got it (0 = unroutable). The
   * journal writes of the copies that went to durable queues are added to `writes`: the publish is
   * confirmed once `confirm(writes)` resolves.
   */
  publish(exchange: string, routingKey: string, message: StoredMessage, writes: Promise<void>[] = []): number {
    let routed = 0;
    for (const [queue, patterns] of this.bindings.get(exchange) ?? []) {
      if ([...patterns].some((p) => topicMatches(p, routingKey)) && this.sendToQueue(queue, routed === 0 ? { ...message } : { ...message, parsed: undefined }, writes)) routed += 1;
    }
    return routed;
  }

  /** Like the default exchange: false when the queue does not exist (the message is dropped). */
  sendToQueue(name: string, message: StoredMessage, writes: Promise<void>[] = []): boolean {
    const queue = this.queues.get(name);
    if (!queue) return false;
    this.enqueue(queue, this.journalled(queue, message, null, writes));
    return true;
  }

  /**
   * Delivers to a queue after `delayMs` (a retry). In a durable queue it is journalled now, with the
   * time it is due, so a restart meanwhile still delivers it.
   */
  sendLater(name: string, message: StoredMessage, delayMs: number, writes: Promise<void>[] = []): void {
    const queue = this.queues.get(name);
    if (!queue) return;
    const stored = this.journalled(queue, message, Date.now() + delayMs, writes);
    this.after(delayMs, () => this.enqueue(queue, stored));
  }

  /** Resolves once `writes` are on the disk (at once for a broker without a journal). */
  confirm(writes: readonly Promise<void>[]): Promise<void> {
    return this.journal ? this.journal.confirm(writes) : Promise.resolve();
  }

  /** A copy of `message` for `queue`, written to the journal first when the queue is durable. */
  private journalled(queue: MemoryQueue, message: StoredMessage, notBefore: number | null, writes: Promise<void>[]): StoredMessage {
    const stored: StoredMessage = { ...message, headers: { ...message.headers } };
    delete stored.seq;
    if (queue.durable && this.journal) {
      stored.seq = ++this.journalSeq;
      writes.push(this.journal.put({ queue: queue.name, seq: stored.seq, body: stored.body, headers: stored.headers, notBefore }));
    }
    return stored;
  }

  private enqueue(queue: MemoryQueue, message: StoredMessage, pump = true): void {
    // Expired requests at the head of an unconsumed queue go, as RabbitMQ drops them there.
    const now = Date.now();
    while (queue.ready.length > 0 && (queue.ready[0]?.expiresAt ?? Infinity) <= now) this.leave(queue, queue.ready.shift() as StoredMessage);
    queue.ready.push(message);
    queue.readyChars += message.body.length;
    if (pump) this.pump(queue);
  }

  /** The message left its queue for good (acked, taken, trimmed): its journal entry goes. */
  private forget(queue: MemoryQueue, message: StoredMessage): void {
    if (message.seq !== undefined && this.journal) this.journal.remove(queue.name, message.seq);
  }

  /**
   * Resolves true once the messages waiting to be delivered to this broker's consumers hold fewer
   * than `limit` body characters, or false after `maxWaitMs` without room. The in-process bus holds
   * its queues in memory (and in its journal), so publishers at the edge (an API request, a tracker
   * hit) wait a moment for the consumers to catch up, then are refused rather than grow the process.
   * Queues nobody consumes (dead letters, a service this process does not run) do not count:
   * waiting would not empty them.
   */
  waitForRoom(limit: number, maxWaitMs: number): Promise<boolean> {
    if (this.backlogChars() < limit) return Promise.resolve(true);
    if (maxWaitMs <= 0) return Promise.resolve(false);
    return new Promise((resolveRoom) => {
      const waiter = {
        limit,
        resolve: (room: boolean) => {
          clearTimeout(timer);
          resolveRoom(room);
        },
      };
      const timer = setTimeout(() => {
        const i = this.roomWaiters.indexOf(waiter);
        if (i >= 0) this.roomWaiters.splice(i, 1);
        resolveRoom(false);
      }, maxWaitMs);
      timer.unref();
      this.roomWaiters.push(waiter);
    });
  }

  /**
   * Messages this broker's consumers still have to handle: ready in a subscribed queue, or delivered
   * and not yet settled. A drain waits for this to reach zero. Retries waiting for their delay do not
   * count (they are journalled, and due later anyway).
   */
  pendingWork(): number {
    let total = 0;
    for (const queue of this.queues.values()) {
      if (queue.subscriptions.length > 0) total += queue.ready.length;
      for (const sub of queue.subscriptions) total += sub.unacked.size;
    }
    return total;
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
      const waiter = this.roomWaiters[i] as { limit: number; resolve(room: boolean): void };
      if (backlog < waiter.limit) {
        this.roomWaiters.splice(i, 1);
        waiter.resolve(true);
      }
    }
  }

  /** Runs `fn` after `ms` without keeping the process alive for it (cancelled when a durable broker closes). */
  private after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
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
      const message = queue.ready.shift() as StoredMessage;
      this.leave(queue, message);
      this.forget(queue, message);
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
    if (queue && message) {
      this.leave(queue, message);
      this.forget(queue, message);
    }
    return message;
  }

  /** The ready messages of a queue, oldest first, left where they are (a dry run looks at them). */
  peek(queueName: string): readonly StoredMessage[] {
    return [...(this.queues.get(queueName)?.ready ?? [])];
  }

  /**
   * Moves ready messages of `from` to other queues (a redrive), durably. `route` is asked about each
   * ready message, oldest first, until `max` have moved: it answers the queue and message its copy
   * goes to (enqueued there at the tail, in this order, and journalled if that queue is durable), or
   * null to leave the message in its place. The originals leave `from` at once (nobody else can take
   * them meanwhile); their journal entries are removed only once every copy's write is confirmed, so
   * a crash in between leaves a message in both queues (the same id: consumers deduplicate) and
   * never in neither. If the journal fails, the originals go back to the head of `from` and the
   * error is thrown. Resolves with the messages moved.
   */
  async move(from: string, max: number, route: (message: StoredMessage) => { queue: string; message: StoredMessage } | null): Promise<StoredMessage[]> {
    const queue = this.queues.get(from);
    if (!queue) return [];
    const moved: StoredMessage[] = [];
    const writes: Promise<void>[] = [];
    let kept = 0;
    for (let read = 0; read < queue.ready.length; read += 1) {
      const message = queue.ready[read] as StoredMessage;
      const target = moved.length < max ? route(message) : null;
      if (target && this.sendToQueue(target.queue, target.message, writes)) {
        moved.push(message);
        queue.readyChars -= message.body.length;
      } else {
        queue.ready[kept] = message;
        kept += 1;
      }
    }
    queue.ready.length = kept;
    this.wake();
    try {
      await this.confirm(writes);
    } catch (error) {
      const restored = moved.concat(queue.ready);
      queue.ready.length = 0;
      for (const message of restored) queue.ready.push(message);
      for (const message of moved) queue.readyChars += message.body.length;
      throw error;
    }
    for (const message of moved) this.forget(queue, message);
    return moved;
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
          if (!sub.unacked.delete(tag)) return;
          this.forget(queue, message);
          this.pump(queue);
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
