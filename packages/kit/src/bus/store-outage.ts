// Which handler failures mean "a store (or the broker) is out of reach", not "this message is bad".
// A consumer meeting one does not spend the message's delivery attempts on it: it holds the
// delivery and tries again with exponential backoff until the store answers (delivery.ts), so a
// PostgreSQL failover, a ClickHouse or Redis restart or a network blip is a pause, never a dead letter.

/** Thrown by a handler (or a store driver) to say its store cannot be reached now. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/** Socket and DNS failures (Node, undici) that mean the server is not there now. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED']);

/**
 * PostgreSQL SQLSTATEs of a server going away or not taking connections: class 08 (connection
 * exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now), 53300 (too many
 * connections).
 */
function isPostgresOutage(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** What the drivers say when their connection is gone (pg, ioredis, @clickhouse/client, undici, amqplib). */
const OUTAGE_MESSAGES = /connection terminated|connection is closed|connection closed|channel closed|channel ended|terminating connection|socket hang up|other side closed|fetch failed|timeout exceeded when trying to connect|max retries per request|stream isn't writeable|connection refused|client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)/i;

/** True when `error` (or any error in its `cause` chain) says a store or server is out of reach. */
export function isStoreOutage(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 8; depth += 1) {
    if (current instanceof StoreUnavailableError) return true;
    if (typeof current !== 'object') return false;
    const { code, name, message, cause } = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isPostgresOutage(code)))) return true;
    if (name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && OUTAGE_MESSAGES.test(message)) return true;
    current = cause;
  }
  return false;
}

/** Backoff of a paused delivery: 1 s doubling to `maxMs` (2 minutes by default), with jitter. */
export function outageBackoffMs(pauses: number, maxMs = 120_000): number {
  const base = Math.min(maxMs, 1000 * 2 ** Math.min(pauses, 20));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
