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

  /**
   * Rewrites the person (root) of every member of the identity's group, so analytics reads join
   * one small table instead of walking merges. The row version is the group size: groups only
   * grow, so a stale rewrite racing a newer one loses. Returns the group.
   */
  async refreshRoots(dedupToken: string, workspaceId: string, identityId: string): Promise<IdentityGroup> {
    const group = await this.groupOf(workspaceId, identityId);
    await this.ch.insert(
      'identity_roots',
      group.members.map((member) => ({ workspace_id: workspaceId, identity_id: member, root_id: group.canonical, version: group.members.length })),
      { dedupToken },
    );
    return group;
  }

  /** The group an identity belongs to: a breadth-first walk over merge edges in both directions. */
  async groupOf(workspaceId: string, identityId: string): Promise<IdentityGroup> {
    return (await this.groupsOf(workspaceId, [identityId])).get(identityId) as IdentityGroup;
  }

  /**
   * The groups of many identities at once: one breadth-first walk over merge edges in both
   * directions whose frontier holds every id, so the query count follows the longest merge chain,
   * not the number of ids.
   * Each given id maps to its group; ids of one group share the same object.
   */
  async groupsOf(workspaceId: string, identityIds: readonly string[]): Promise<Map<string, IdentityGroup>> {
    const parent = new Map<string, string>(identityIds.map((id) => [id, id]));
    const find = (id: string): string => {
      let root = id;
      while (parent.get(root) !== root) root = parent.get(root) as string;
      parent.set(id, root);
      return root;
    };
    const mergedAway = new Set<string>();
    let frontier = [...parent.keys()];
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
          if (!parent.has(id)) {
            parent.set(id, id);
            next.push(id);
          }
        }
        parent.set(find(edge.from_id), find(edge.into_id));
      }
      frontier = next;
    }
    const components = new Map<string, string[]>();
    for (const id of parent.keys()) {
      const root = find(id);
      const ids = components.get(root);
      if (ids) ids.push(id);
      else components.set(root, [id]);
    }
    const groups = new Map<string, IdentityGroup>();
    for (const ids of components.values()) {
      const sorted = ids.sort();
      const group = { canonical: sorted.find((id) => !mergedAway.has(id)) ?? (sorted[0] as string), members: sorted };
      for (const id of sorted) groups.set(id, group);
    }
    return groups;
  }
}
