// Outcomes found by the keys that tie them to other facts (outcome_keys, filled by materialized
// views on conversions and milestones): `i:<identity>` and `e:<normalised email>`.
import type { ClickHouseStore } from '@sightline/kit';

export interface OutcomeRef {
  key: string;
  websiteId: string;
  kind: 'conversion' | 'milestone';
  outcomeId: string;
  occurredMs: number;
  /** The outcome's own relationship start (stated, else its time). */
  beganMs: number;
}

interface Row {
  key: string;
  site: string;
  outcome_kind: 'conversion' | 'milestone';
  outcome_id: string;
  occurred_ms: number;
  began_ms: number;
}

export class OutcomeKeysRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  /** Outcomes under any of `keys` in the workspace, optionally of one website and in a time range. */
  async byKeys(workspaceId: string, keys: readonly string[], filter: { websiteId?: string; from?: Date; to?: Date } = {}): Promise<OutcomeRef[]> {
    if (keys.length === 0) return [];
    const where = [
      ...(filter.websiteId ? ['website_id = {website:UUID}'] : []),
      ...(filter.from ? ["occurred_at >= {from:DateTime64(3, 'UTC')}"] : []),
      ...(filter.to ? ["occurred_at <= {to:DateTime64(3, 'UTC')}"] : []),
    ];
    // Output names differ from the column names: an alias named like a column would shadow it.
    const rows = await this.ch.query<Row>(
      `SELECT DISTINCT key, toString(website_id) AS site, toString(kind) AS outcome_kind, outcome_id,
              toUnixTimestamp64Milli(occurred_at) AS occurred_ms, toUnixTimestamp64Milli(began) AS began_ms
         FROM outcome_keys
        WHERE workspace_id = {workspace:UUID} AND key IN {keys:Array(String)}${where.map((w) => ` AND ${w}`).join('')}`,
      { workspace: workspaceId, keys: [...keys], ...(filter.websiteId ? { website: filter.websiteId } : {}), ...(filter.from ? { from: filter.from } : {}), ...(filter.to ? { to: filter.to } : {}) },
    );
    return rows.map((r) => ({ key: r.key, websiteId: r.site, kind: r.outcome_kind, outcomeId: r.outcome_id, occurredMs: Number(r.occurred_ms), beganMs: Number(r.began_ms) }));
  }
}
