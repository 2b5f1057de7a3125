// The catalog of custom event types each website has sent (ClickHouse `event_types`), which a
// step's event_type pattern is checked against when a funnel is written. Bounded, so that check
// and its error stay small whatever a website sends: at most MAX_CUSTOM_EVENT_TYPES types per
// website, each at most FUNNEL_MATCHER.maxLength characters. Later or longer types are still
// stored as events (and counted by funnels); they are only not offered to the check.
import type { ClickHouseStore } from '@sightline/kit';
import { FUNNEL_KNOWN_EVENT_TYPES, FUNNEL_MATCHER, MAX_CUSTOM_EVENT_TYPES } from '@sightline/proto-schemas';

/** POST /events takes types of up to 100 characters; a longer one only arrives by another path. */
export const MAX_CATALOG_TYPE_LENGTH = FUNNEL_MATCHER.maxLength;
/** Websites whose catalog this process remembers (least recently used forgotten first). */
const CACHED_WEBSITES = 500;

const KNOWN = new Set<string>(FUNNEL_KNOWN_EVENT_TYPES);

export class EventTypesRepo {
  /** Each remembered website's catalog as stored; Map order is recency of use. */
  private readonly cache = new Map<string, Set<string>>();

  constructor(private readonly ch: ClickHouseStore, private readonly limit = MAX_CUSTOM_EVENT_TYPES) {}

  /** Adds the new custom types among `types` while the website's catalog has room. */
  async record(websiteId: string, types: Iterable<string>): Promise<void> {
    const custom = [...new Set(types)].filter((t) => !KNOWN.has(t) && t.length > 0 && t.length <= MAX_CATALOG_TYPE_LENGTH);
    if (custom.length === 0) return;
    const catalog = await this.remembered(websiteId);
    const room = this.limit - catalog.size;
    const fresh = custom.filter((t) => !catalog.has(t)).sort().slice(0, Math.max(0, room));
    if (fresh.length === 0) return;
    // No dedup token needed: a row written twice is one type (ReplacingMergeTree, reads GROUP BY).
    await this.ch.insert('event_types', fresh.map((t) => ({ website_id: websiteId, event_type: t })));
    for (const t of fresh) catalog.add(t);
  }

  /**
   * The website's custom types, sorted: one range of the table's primary key, at most `limit` rows
   * (consumers in several processes may together store a few more; they are never read).
   */
  async list(websiteId: string): Promise<string[]> {
    const rows = await this.ch.query<{ t: string }>(
      'SELECT event_type AS t FROM event_types WHERE website_id = {website:UUID} GROUP BY event_type ORDER BY event_type LIMIT {limit:UInt32}',
      { website: websiteId, limit: this.limit },
    );
    return rows.map((r) => r.t);
  }

  private async remembered(websiteId: string): Promise<Set<string>> {
    let catalog = this.cache.get(websiteId);
    if (catalog) {
      this.cache.delete(websiteId);
    } else {
      catalog = new Set(await this.list(websiteId));
      if (this.cache.size >= CACHED_WEBSITES) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(websiteId, catalog);
    return catalog;
  }
}
