// People through the identity graph, as the read model resolves them: an identity's person is its
// merge root (identity_roots, rewritten for a whole group on every merge), itself when it was never
// merged; a person's members are every identity whose root it is. One query per call.
import type { ClickHouseStore } from '@sightline/kit';
import { ROOTS_SQL } from '../analytics/journey-fields';

export interface People {
  /** The person of an identity id ('' stays ''). */
  personOf(identityId: string): string;
  /** Every identity id of the people of the ids asked about, with its person (each person is its own member). */
  members: { ids: string[]; persons: string[] };
}

export async function peopleOf(ch: ClickHouseStore, workspaceId: string, identityIds: readonly string[]): Promise<People> {
  const ids = [...new Set(identityIds.filter((id) => id !== ''))];
  const rows = ids.length === 0 ? [] : await ch.query<{ identity_id: string; root_id: string }>(
    `WITH roots AS ${ROOTS_SQL}
     SELECT identity_id, root_id FROM roots
      WHERE identity_id IN {ids:Array(String)}
         OR root_id IN (SELECT root_id FROM roots WHERE identity_id IN {ids:Array(String)})`,
    { workspace: workspaceId, ids },
  );
  const rootOf = new Map(rows.filter((r) => r.root_id !== '').map((r) => [r.identity_id, r.root_id]));
  const personOf = (id: string): string => (id === '' ? '' : rootOf.get(id) ?? id);
  const member = new Map<string, string>();
  for (const [id, root] of rootOf) member.set(id, root);
  for (const id of ids) {
    const person = personOf(id);
    member.set(person, person);
  }
  return { personOf, members: { ids: [...member.keys()], persons: [...member.values()] } };
}
