// Conversions as attribution stores them: one row per conversion id, scoped to its website.
import type { ClickHouseStore } from '@sightline/kit';
import type { ConversionCreatedV1 } from '@sightline/proto-schemas';
import { isoFromClickHouse, isoOrNull } from './clickhouse-time';

/** A touch known without browsing history (imported contact, CRM-provided attribution). */
export interface StoredTouch {
  at: string | null;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
}

export interface ConversionRow {
  conversion_id: string;
  workspace_id: string;
  website_id: string;
  identity_id: string | null;
  anonymous_id: string | null;
  occurred_at: string;
  event_type: string;
  event_name: string | null;
  revenue: number | null;
  currency: string | null;
  first_touch: StoredTouch | null;
  last_touch: StoredTouch | null;
}

interface RawConversion {
  conversion_id: string;
  workspace_id: string;
  website_id: string;
  identity_id: string;
  anonymous_id: string;
  occurred_at: string;
  event_type: string;
  event_name: string;
  revenue: number | null;
  currency: string;
  first_touch_at: string | null;
  first_touch_channel: string | null;
  first_touch_source: string | null;
  first_touch_medium: string | null;
  first_touch_campaign: string | null;
  last_touch_at: string | null;
  last_touch_channel: string | null;
  last_touch_source: string | null;
  last_touch_medium: string | null;
  last_touch_campaign: string | null;
}

// Plain columns (no same-named aliases, which would shadow them in WHERE): JSONEachRow already
// renders UUIDs, DateTime64 and LowCardinality values as strings.
const COLUMNS = `conversion_id, workspace_id, website_id, identity_id, anonymous_id, occurred_at, event_type,
  event_name, revenue, currency, first_touch_at, first_touch_channel, first_touch_source, first_touch_medium,
  first_touch_campaign, last_touch_at, last_touch_channel, last_touch_source, last_touch_medium, last_touch_campaign`;

export type TouchInput = { at: string; channel: string; source?: string | null; medium?: string | null; campaign?: string | null };

export class ConversionsRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  /** Stores a conversion; `touches` are set only by sources that know them without sessions. */
  async insert(dedupToken: string, c: ConversionCreatedV1, touches?: { first?: TouchInput; last?: TouchInput }): Promise<void> {
    await this.insertMany(dedupToken, [{ conversion: c, ...(touches ? { touches } : {}) }]);
  }

  /** Several conversions in one insert (the consumer coalesces deliveries). */
  async insertMany(dedupToken: string, items: { conversion: ConversionCreatedV1; touches?: { first?: TouchInput; last?: TouchInput } }[]): Promise<void> {
    if (items.length === 0) return;
    const touchColumns = (prefix: string, t: TouchInput | undefined): Record<string, unknown> => ({
      [`${prefix}_at`]: t?.at ?? null,
      [`${prefix}_channel`]: t?.channel ?? null,
      [`${prefix}_source`]: t?.source ?? null,
      [`${prefix}_medium`]: t?.medium ?? null,
      [`${prefix}_campaign`]: t?.campaign ?? null,
    });
    await this.ch.insert(
      'conversions',
      items.map(({ conversion: c, touches }) => ({
        conversion_id: c.conversion_id,
        workspace_id: c.workspace_id,
        website_id: c.website_id,
        identity_id: c.identity_id ?? '',
        anonymous_id: c.anonymous_id ?? '',
        email: c.email ?? '',
        occurred_at: c.occurred_at,
        event_type: c.event_type,
        event_name: c.event_name ?? '',
        revenue: c.revenue,
        currency: c.currency ?? '',
        origin: c.origin ?? 'api',
        relationship_started_at: c.relationship_started_at ?? null,
        ...touchColumns('first_touch', touches?.first),
        ...touchColumns('last_touch', touches?.last),
      })),
      { dedupToken },
    );
  }


  /** One conversion of one website; null when absent or when it belongs to another website. */
  async find(websiteId: string, conversionId: string): Promise<ConversionRow | null> {
    const rows = await this.ch.query<RawConversion>(
      `SELECT ${COLUMNS} FROM conversions
        WHERE website_id = {website:UUID} AND conversion_id = {id:UUID}
        LIMIT 1`,
      { website: websiteId, id: conversionId },
    );
    return rows[0] ? toConversion(rows[0]) : null;
  }

  /** Conversions of a group of identities on a website with occurred_at in [from, to), oldest first. */
  async ofIdentities(websiteId: string, identityIds: readonly string[], from: Date, to: Date, limit: number): Promise<ConversionRow[]> {
    if (identityIds.length === 0) return [];
    const rows = await this.ch.query<RawConversion>(
      `SELECT ${COLUMNS} FROM conversions
        WHERE website_id = {website:UUID} AND identity_id IN {ids:Array(String)}
          AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
        ORDER BY occurred_at, conversion_id
        LIMIT 1 BY conversion_id
        LIMIT {limit:UInt32}`,
      { website: websiteId, ids: [...identityIds], from, to, limit },
    );
    return rows.map(toConversion);
  }
}

function touch(at: string | null, channel: string | null, source: string | null, medium: string | null, campaign: string | null): StoredTouch | null {
  if (channel === null) return null;
  return { at: isoOrNull(at), channel, source, medium, campaign };
}

function toConversion(r: RawConversion): ConversionRow {
  return {
    conversion_id: r.conversion_id,
    workspace_id: r.workspace_id,
    website_id: r.website_id,
    identity_id: r.identity_id === '' ? null : r.identity_id,
    anonymous_id: r.anonymous_id === '' ? null : r.anonymous_id,
    occurred_at: isoFromClickHouse(r.occurred_at),
    event_type: r.event_type,
    event_name: r.event_name === '' ? null : r.event_name,
    revenue: r.revenue === null ? null : Number(r.revenue),
    currency: r.currency === '' ? null : r.currency,
    first_touch: touch(r.first_touch_at, r.first_touch_channel, r.first_touch_source, r.first_touch_medium, r.first_touch_campaign),
    last_touch: touch(r.last_touch_at, r.last_touch_channel, r.last_touch_source, r.last_touch_medium, r.last_touch_campaign),
  };
}
