// Per-workspace limits: requests per minute by plan, a monthly quota, and at most four analytics
// queries in flight. Counters live in the KV store (Redis or in-memory), so they are exact across
// concurrent requests and, on Redis, across gateway replicas. The monthly counts are also kept
// durably (quota-ledger.ts): a KV that lost them gets them back before the next request is decided.
//
// The four analytics slots are shared with background work (alerts gathering their figures through
// gateway.acquireAnalyticsSlot): slot i of a workspace is the KV key analytics:ws:<id>:<i>, set only
// if absent, with the lease as its TTL, to its holder's lease id. So any replica can release a
// lease by its id, and a holder that dies lets its slot lapse when the lease ends. People's requests
// take the first free slot from 0 up; background work only the top BACKGROUND_ANALYTICS_QUERIES
// ones, so it never holds more than those and people always keep the others.
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { ProblemError, type KvStore, type RateLimitResult, type SemaphoreLease } from '@sightline/kit';
import { BACKGROUND_ANALYTICS_QUERIES, CONCURRENT_ANALYTICS_QUERIES, PLANS, UNAUTHENTICATED_REQUESTS_PER_MINUTE } from '@sightline/proto-schemas';
import type { QuotaLedger } from './quota-ledger';

export { BACKGROUND_ANALYTICS_QUERIES, CONCURRENT_ANALYTICS_QUERIES };
const ALL_SLOTS = Array.from({ length: CONCURRENT_ANALYTICS_QUERIES }, (_, i) => i);
const BACKGROUND_SLOTS = ALL_SLOTS.slice(CONCURRENT_ANALYTICS_QUERIES - BACKGROUND_ANALYTICS_QUERIES);
const LEASE_ID = /^(\d+):[0-9a-f-]{36}$/;
/** Requests per minute for callers that are not yet authenticated, per client address. */
export const UNAUTHENTICATED_PER_MINUTE = UNAUTHENTICATED_REQUESTS_PER_MINUTE;
/**
 * Tracker hits per minute on the public /collect (a request costs as many points as it carries
 * hits). Per address: far above one browser, enough for a busy office behind one NAT address.
 * Per website: a flood from many addresses cannot bury a website's real traffic in junk.
 */
export const COLLECT_HITS_PER_ADDRESS_PER_MINUTE = 1_200;
export const COLLECT_HITS_PER_SITE_PER_MINUTE = 60_000;
const MINUTE_MS = 60_000;
/** A month's KV counter outlives its month by a few days. */
const QUOTA_KEY_TTL_MS = 40 * 24 * 3600 * 1000;

export interface PlanLimits {
  requestsPerMinute: number | null;
  monthlyQuota: number | null;
}

export function planLimits(plan: string): PlanLimits {
  const found = PLANS.find((p) => p.name === plan);
  if (!found) return { requestsPerMinute: 60, monthlyQuota: 0 };
  return { requestsPerMinute: found.requests_per_minute, monthlyQuota: found.monthly_quota };
}

export interface LimitsOptions {
  /** Keeps the monthly counts durably; without it they live in the KV only. */
  ledger?: QuotaLedger;
  /** A plan's limits; defaults to the plans of proto-schemas (tests pass small ones). */
  plans?: (plan: string) => PlanLimits;
}

/** What admitting a request counted: the workspace's requests this month (UTC), this one included; null without a quota. */
export interface Admitted {
  monthlyUsed: number | null;
}

/** A KV counter being given back its stored count: `base` added on top of the `before` counted since it was new. */
interface Restore {
  base: number;
  before: number;
}

export class Limits {
  private readonly ledger: QuotaLedger | undefined;
  private readonly plans: (plan: string) => PlanLimits;
  /** Monthly counters this replica is restoring now, by KV key. */
  private readonly restoring = new Map<string, Promise<Restore>>();

  constructor(private readonly kv: KvStore, private readonly leaseMs: number, options: LimitsOptions = {}) {
    this.ledger = options.ledger;
    this.plans = options.plans ?? planLimits;
  }

  /** Counts one request against the workspace's minute budget and monthly quota; throws a 429 problem when spent. */
  async admit(workspaceId: string, plan: string, res: Response, limited: (kind: string) => void): Promise<Admitted> {
    const limits = this.plans(plan);
    if (limits.requestsPerMinute !== null) {
      const rate = await this.kv.consumeRate(`rate:ws:${workspaceId}`, limits.requestsPerMinute, MINUTE_MS);
      setRateHeaders(res, rate);
      if (!rate.allowed) {
        limited('rate-limit-exceeded');
        throw new ProblemError('rate-limit-exceeded', {
          detail: `The workspace has used its ${rate.limit} requests for this minute (plan "${plan}").`,
          remediation: `Wait ${seconds(rate.resetMs)} seconds (Retry-After) and retry the request unchanged; prefer one wide query to many narrow ones.`,
          headers: { 'Retry-After': String(seconds(rate.resetMs)) },
        });
      }
    } else {
      setRateHeaders(res, { allowed: true, limit: 1_000_000, remaining: 1_000_000, resetMs: MINUTE_MS });
    }
    if (limits.monthlyQuota !== null) {
      const used = await this.countMonth(workspaceId, new Date().toISOString().slice(0, 7));
      if (used > limits.monthlyQuota) {
        limited('quota-exceeded');
        const retryAfter = seconds(msUntilNextMonth());
        throw new ProblemError('quota-exceeded', {
          detail: `The workspace has used its monthly allowance of ${limits.monthlyQuota} requests (plan "${plan}").`,
          remediation: 'Wait until the allowance renews on the first day of next month (UTC), or move the workspace to a larger plan.',
          headers: { 'Retry-After': String(retryAfter) },
        });
      }
      return { monthlyUsed: used };
    }
    return { monthlyUsed: null };
  }

  /**
   * Counts one request in the workspace's month on the KV (one round trip) and answers the month's
   * count. A counter that answers exactly 1 was new: the first request of the month, or a KV that
   * lost its data. Then the stored count (if any) is added to it (one more round trip) before this
   * request is decided, so the allowance goes on from where it was.
   */
  private async countMonth(workspaceId: string, month: string): Promise<number> {
    const key = `quota:ws:${workspaceId}:${month}`;
    const answered = await this.kv.incrBy(key, 1, QUOTA_KEY_TTL_MS);
    if (!this.ledger) return answered;
    let used = answered;
    if (answered === 1) {
      used = 1 + (await this.restore(this.ledger, key, workspaceId, month)).base;
    } else {
      // Counted on the new counter before this replica added the stored count back: that count is ours too.
      const restoring = this.restoring.get(key);
      const restored = restoring ? await restoring.catch(() => null) : null;
      if (restored && answered <= restored.before) used = answered + restored.base;
    }
    this.ledger.record(workspaceId, month, used);
    return used;
  }

  private async restore(ledger: QuotaLedger, key: string, workspaceId: string, month: string): Promise<Restore> {
    const pending = (async (): Promise<Restore> => {
      const base = await ledger.restorable(workspaceId, month);
      if (base <= 0) return { base: 0, before: 0 };
      // Requests answered up to `total - base` were counted before the base was added.
      const total = await this.kv.incrBy(key, base, QUOTA_KEY_TTL_MS);
      return { base, before: total - base };
    })();
    this.restoring.set(key, pending);
    try {
      return await pending;
    } finally {
      if (this.restoring.get(key) === pending) this.restoring.delete(key);
    }
  }

  /** Limits callers without a valid key by address, so a bad key cannot be tried without bound. */
  async admitAnonymous(address: string, res: Response, limited: (kind: string) => void): Promise<void> {
    const rate = await this.kv.consumeRate(`rate:ip:${address}`, UNAUTHENTICATED_PER_MINUTE, MINUTE_MS);
    setRateHeaders(res, rate);
    if (!rate.allowed) {
      limited('rate-limit-exceeded');
      throw new ProblemError('rate-limit-exceeded', {
        detail: `This address has made ${rate.limit} requests this minute without a valid key.`,
        remediation: `Wait ${seconds(rate.resetMs)} seconds (Retry-After) and retry with a valid key.`,
        headers: { 'Retry-After': String(seconds(rate.resetMs)) },
      });
    }
  }

  /**
   * Counts tracker hits from one client address (the RateLimit headers describe this budget, the
   * one a browser's owner can act on) or to one website; throws a 429 problem when spent.
   */
  async admitHits(scope: 'address' | 'site', id: string, hits: number, res: Response, limited: (kind: string) => void): Promise<void> {
    const budget = scope === 'address' ? COLLECT_HITS_PER_ADDRESS_PER_MINUTE : COLLECT_HITS_PER_SITE_PER_MINUTE;
    const rate = await this.kv.consumeRate(`collect:${scope}:${id}`, budget, MINUTE_MS, Math.max(1, hits));
    if (scope === 'address') setRateHeaders(res, rate);
    if (!rate.allowed) {
      limited('rate-limit-exceeded');
      throw new ProblemError('rate-limit-exceeded', {
        detail: scope === 'address'
          ? `This address has sent more than ${budget} tracker hits this minute.`
          : `The website has received more than ${budget} tracker hits this minute.`,
        remediation: `Wait ${seconds(rate.resetMs)} seconds (Retry-After); a browser's tracker sends far fewer hits, so check for a loop or a replay that should use an API key.`,
        headers: { 'Retry-After': String(seconds(rate.resetMs)) },
      });
    }
  }

  /** Takes one of the workspace's analytics slots; throws too-many-concurrent when all are busy. */
  async acquireAnalyticsSlot(workspaceId: string, limited: (kind: string) => void): Promise<SemaphoreLease> {
    const leaseId = await this.takeSlot(workspaceId, ALL_SLOTS, this.leaseMs);
    if (leaseId) return { release: async () => void (await this.releaseAnalyticsSlot(workspaceId, leaseId)) };
    limited('too-many-concurrent');
    throw new ProblemError('too-many-concurrent', {
      detail: `The workspace already has ${CONCURRENT_ANALYTICS_QUERIES} analytics queries running.`,
      remediation: 'Retry after the Retry-After delay; run fewer queries at once and prefer one wide window to many narrow ones.',
      headers: { 'Retry-After': '1' },
    });
  }

  /** A slot for background work (at most BACKGROUND_ANALYTICS_QUERIES at once): its lease id, or null when they are busy. */
  acquireBackgroundSlot(workspaceId: string, leaseMs: number): Promise<string | null> {
    return this.takeSlot(workspaceId, BACKGROUND_SLOTS, leaseMs);
  }

  /** Gives a slot back; false when its lease had lapsed already (the slot may be someone else's now). */
  async releaseAnalyticsSlot(workspaceId: string, leaseId: string): Promise<boolean> {
    const slot = LEASE_ID.exec(leaseId)?.[1];
    if (slot === undefined || Number(slot) >= CONCURRENT_ANALYTICS_QUERIES) return false;
    const key = slotKey(workspaceId, Number(slot));
    // Read, then delete: only a holder past its own lease could free a successor's slot this way.
    if ((await this.kv.get(key)) !== leaseId) return false;
    await this.kv.del(key);
    return true;
  }

  private async takeSlot(workspaceId: string, slots: readonly number[], leaseMs: number): Promise<string | null> {
    const holders = await this.kv.getMany(slots.map((i) => slotKey(workspaceId, i)));
    for (const [n, slot] of slots.entries()) {
      if (holders[n] !== null) continue;
      const leaseId = `${slot}:${randomUUID()}`;
      // Only if still free: another request may have taken it since the read.
      if (await this.kv.set(slotKey(workspaceId, slot), leaseId, { ifAbsent: true, ttlMs: leaseMs })) return leaseId;
    }
    return null;
  }
}

function slotKey(workspaceId: string, slot: number): string {
  return `analytics:ws:${workspaceId}:${slot}`;
}

function setRateHeaders(res: Response, rate: RateLimitResult): void {
  res.setHeader('RateLimit-Limit', String(rate.limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, rate.remaining)));
  res.setHeader('RateLimit-Reset', String(seconds(rate.resetMs)));
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function msUntilNextMonth(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime();
}
