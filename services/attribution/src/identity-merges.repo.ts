// Identity merges as attribution sees them: edges loser → winner, stored as they arrive and
// resolved at read time. A person is the connected group of identity ids joined by merges, so
// history stored under a loser's id is read together with the winner's without rewriting rows.
import type { ClickHouseStore } from '@sightline/kit';

export interface IdentityGroup {
  /** The id the group is known by now: the member that was never merged into another. */
  canonical: string;
  /** Every id of the group, canonical included. */
  members: string[];
}

/** A merge chain deeper than this is a data fault; stop rather than loop. */
const MAX_WALK_STEPS = 64;

export class IdentityMergesRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  async insertMerge(dedupToken: string, workspaceId: string, from: string, into: string, mergedAt: string): Promise<void> {
    await this.ch.insert(
      'identity_merges',
      [{ workspace_id: workspaceId, from_identity_id: from, into_identity_id: into, merged_at: mergedAt }],
      { dedupToken },
    );
  }

  /** The group an identity belongs to: a breadth-first walk over merge edges in both directions. */
  async groupOf(workspaceId: string, identityId: string): Promise<IdentityGroup> {
    const members = new Set<string>([identityId]);
    const mergedAway = new Set<string>();
    let frontier = [identityId];
    for (let step = 0; frontier.length > 0 && step < MAX_WALK_STEPS; step += 1) {
      const edges = await this.ch.query<{ from_id: string; into_id: string }>(
        `SELECT DISTINCT from_identity_id AS from_id, into_identity_id AS into_id
           FROM identity_merges
          WHERE workspace_id = {workspace:UUID}
            AND (from_identity_id IN {ids:Array(String)} OR into_identity_id IN {ids:Array(String)})`,
        { workspace: workspaceId, ids: frontier },
      );
      const next: string[] = [];
      for (const edge of edges) {
        mergedAway.add(edge.from_id);
        for (const id of [edge.from_id, edge.into_id]) {
          if (!members.has(id)) {
            members.add(id);
            next.push(id);
          }
        }
      }
      frontier = next;
    }
    const sorted = [...members].sort();
    const canonical = sorted.find((id) => !mergedAway.has(id)) ?? identityId;
    return { canonical, members: sorted };
  }
}
