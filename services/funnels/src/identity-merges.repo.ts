// Identity merges as funnels sees them: edges loser → winner stored as they arrive, and each merged
// id's person (the group's canonical id) written to identity_roots, which reads join. History stored
// under a loser's id is read as the winner's without rewriting a row.
import type { ClickHouseStore } from '@sightline/kit';

/** A merge chain deeper than this is a data fault; stop rather than loop. */
const MAX_WALK_STEPS = 64;

export class IdentityMergesRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  async insertMerge(token: string, workspaceId: string, from: string, into: string): Promise<void> {
    await this.ch.insert('identity_merges', [{ workspace_id: workspaceId, from_identity_id: from, into_identity_id: into }], { dedupToken: token });
  }

  /**
   * Rewrites the person of every member of the identity's group. The row version is the group
   * size: groups only grow, so a stale rewrite racing a newer one loses.
   */
  async refreshRoots(token: string, workspaceId: string, identityId: string): Promise<void> {
    const members = await this.groupOf(workspaceId, identityId);
    await this.ch.insert(
      'identity_roots',
      members.ids.map((id) => ({ workspace_id: workspaceId, identity_id: id, root_id: members.canonical, version: members.ids.length })),
      { dedupToken: token },
    );
  }

  /** The connected group of an id over merge edges (both directions); canonical: the member never merged away. */
  async groupOf(workspaceId: string, identityId: string): Promise<{ canonical: string; ids: string[] }> {
    const seen = new Set<string>([identityId]);
    const mergedAway = new Set<string>();
    let frontier = [identityId];
    for (let step = 0; frontier.length > 0 && step < MAX_WALK_STEPS; step += 1) {
      const edges = await this.ch.query<{ from_id: string; into_id: string }>(
        `SELECT DISTINCT from_identity_id AS from_id, into_identity_id AS into_id FROM identity_merges
          WHERE workspace_id = {workspace:UUID} AND (from_identity_id IN {ids:Array(String)} OR into_identity_id IN {ids:Array(String)})`,
        { workspace: workspaceId, ids: frontier },
      );
      const next: string[] = [];
      for (const edge of edges) {
        mergedAway.add(edge.from_id);
        for (const id of [edge.from_id, edge.into_id]) {
          if (!seen.has(id)) {
            seen.add(id);
            next.push(id);
          }
        }
      }
      frontier = next;
    }
    const ids = [...seen].sort();
    return { canonical: ids.find((id) => !mergedAway.has(id)) ?? (ids[0] as string), ids };
  }
}
