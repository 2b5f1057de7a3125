// Computes and stores outcome_journeys rows for a scope of outcomes: the outcomes, their people,
// the people's touches and the relationship starts of their other conversions, read with plain
// statements (journeys.sql.ts), combined in journeys.ts, written with one insert.
import type { ClickHouseStore } from '@sightline/kit';
import { DEFAULT_LOOKBACK_DAYS } from '@sightline/proto-schemas';
import { journeyRows, touchesByPerson } from './journeys';
import {
  BEGAN_BY_KEY_SQL, scopeConversionsSql, scopeMilestonesSql, scopeParams, TOUCHES_OF_IDENTITIES_SQL,
  type OutcomeFact, type OutcomeScope, type TouchRow,
} from './journeys.sql';
import { peopleOf } from './people.repo';
import { versionText } from './version';

const DAY_MS = 86_400_000;

export interface WebsiteRef {
  websiteId: string;
  workspaceId: string;
}

/** What a computation wrote for a conversion: what conversion.attributed reports. */
export interface ComputedJourney {
  conversion_id: string;
  touches: number;
  first: JourneyTouch | null;
  last: JourneyTouch | null;
}

export interface JourneyTouch {
  started_ms: number;
  channel: string;
  source: string;
  medium: string;
  campaign: string;
}

export class JourneysRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  /**
   * Computes and stores the rows of every outcome in `scope`. `version` orders computations (taken
   * before any fact was read); `token` deduplicates a retried insert. Returns how many outcomes it
   * wrote, and the conversions' first and last touches.
   */
  async compute(site: WebsiteRef, scope: OutcomeScope, version: number, token: string): Promise<{ outcomes: number; conversions: ComputedJourney[] }> {
    const base = { website: site.websiteId, workspace: site.workspaceId, ...scopeParams(scope) };
    const wantConversions = scope.by === 'range' || scope.conversionIds.length > 0;
    const wantMilestones = scope.by === 'range' || scope.milestoneIds.length > 0;
    const [conversions, milestones] = await Promise.all([
      wantConversions ? this.ch.query<OutcomeFact>(scopeConversionsSql(scope), base) : [],
      wantMilestones ? this.ch.query<OutcomeFact>(scopeMilestonesSql(scope), base) : [],
    ]);
    const outcomes = [...conversions, ...milestones];
    if (outcomes.length === 0) return { outcomes: 0, conversions: [] };

    const people = await peopleOf(this.ch, site.workspaceId, outcomes.map((o) => o.identity_id));
    const times = outcomes.map((o) => Number(o.occurred_ms));
    const emailKeys = [...new Set(conversions.map((o) => o.email.trim().toLowerCase()).filter((e) => e !== '').map((e) => `e:${e}`))];
    const [touchRows, began] = await Promise.all([
      people.members.ids.length === 0 ? [] : this.ch.query<TouchRow>(TOUCHES_OF_IDENTITIES_SQL, {
        workspace: site.workspaceId, website: site.websiteId, ids: people.members.ids,
        touch_from: new Date(Math.min(...times) - DEFAULT_LOOKBACK_DAYS * DAY_MS), touch_to: new Date(Math.max(...times)),
      }),
      this.ch.query<{ key: string; began_ms: number }>(BEGAN_BY_KEY_SQL, {
        workspace: site.workspaceId, website: site.websiteId, keys: [...people.members.ids.map((id) => `i:${id}`), ...emailKeys],
      }),
    ]);
    // Relationship starts per person (through its identities) and per email.
    const beganBy = new Map<string, number>();
    const earliest = (key: string, ms: number): void => void beganBy.set(key, Math.min(beganBy.get(key) ?? ms, ms));
    for (const b of began) earliest(b.key.startsWith('i:') ? `p:${people.personOf(b.key.slice(2))}` : b.key, Number(b.began_ms));

    const touches = touchesByPerson(touchRows, people.personOf);
    const rows = journeyRows({
      websiteId: site.websiteId, workspaceId: site.workspaceId, outcomes, personOf: people.personOf, touches, began: beganBy,
      lookbackDays: DEFAULT_LOOKBACK_DAYS, computedAt: versionText(version),
    });
    await this.ch.insert('outcome_journeys', rows, { dedupToken: token });

    const computed = conversions.map((o, i) => {
      const row = rows[i] as Record<string, unknown>;
      const n = Number(row['touches']);
      const at = (index: number): JourneyTouch | null => (n === 0 ? null : {
        started_ms: Date.parse((row['j_started_at'] as string[])[index] as string),
        channel: String((row['j_channel'] as string[])[index]),
        source: String((row['j_source'] as string[])[index]),
        medium: String((row['j_medium'] as string[])[index]),
        campaign: String((row['j_campaign'] as string[])[index]),
      });
      return { conversion_id: o.outcome_id, touches: n, first: at(0), last: at(n - 1) };
    });
    return { outcomes: outcomes.length, conversions: computed };
  }
}

