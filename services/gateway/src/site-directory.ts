// Tracker public ids → websites, for /collect. Anyone on the internet can send any id, so the
// lookup is bounded three ways: an id that cannot be a public id is refused without a lookup, known
// and unknown ids live in separate LRU caches of fixed size, and every entry ages out (a website
// added or changed is seen within the age).
import { LRUCache } from 'lru-cache';
import type { AccountsRepo, Website } from './accounts.repo';

/** The shape `createWebsite` gives public ids: `site_` and 16 hex digits. */
const PUBLIC_ID = /^site_[0-9a-f]{16}$/;

export const SITE_CACHE = {
  /** Known websites kept; a busy installation's active websites fit. */
  maxKnown: 10_000,
  /** Unknown ids remembered, so a flood of one junk id costs one query, and of many junk ids a bounded amount. */
  maxUnknown: 1_000,
  ttlMs: 60_000,
} as const;

export class SiteDirectory {
  private readonly known = new LRUCache<string, Website>({ max: SITE_CACHE.maxKnown, ttl: SITE_CACHE.ttlMs });
  private readonly unknown = new LRUCache<string, true>({ max: SITE_CACHE.maxUnknown, ttl: SITE_CACHE.ttlMs });

  constructor(private readonly repo: AccountsRepo) {}

  /** The website of a public id, or null (malformed ids are answered without touching the database). */
  async find(publicId: unknown): Promise<Website | null> {
    if (typeof publicId !== 'string' || !PUBLIC_ID.test(publicId)) return null;
    const hit = this.known.get(publicId);
    if (hit) return hit;
    if (this.unknown.get(publicId)) return null;
    const website = await this.repo.findWebsiteByPublicId(publicId);
    if (website) this.known.set(publicId, website);
    else this.unknown.set(publicId, true);
    return website;
  }

  /** Entries held (both caches): what the memory bound is about. */
  get size(): number {
    return this.known.size + this.unknown.size;
  }
}
