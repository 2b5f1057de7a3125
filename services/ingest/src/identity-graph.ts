// The identity graph: anonymous ids, email hashes and phone hashes joined into identities, with
// merges when one event links two of them (union by moving the loser's keys to the winner).
// Resolution is per batch: one SELECT for all of a batch's keys, one INSERT for the new ones, all
// under a per-workspace advisory lock so replicas cannot split a person. A key→identity cache skips
// the database entirely when a batch brings no new key. The cache is bounded in size and in age: an
// entry is read from the database again at most IDENTITY_CACHE.ttlMs after it was, so a merge made by
// another replica reaches this one within that time.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SqlStore } from '@sightline/kit';
import type { ClassifiedEventV1 } from '@sightline/proto-schemas';
import { sha256Hex } from './identity-keys';

export interface Merge {
  from: string;
  into: string;
}

type KeyRef = `${'anon' | 'email' | 'phone'}:${string}`;

export const IDENTITY_CACHE = { maxEntries: 200_000, ttlMs: 5 * 60_000 } as const;

export class IdentityGraph {
  private readonly cache = new LRUCache<KeyRef, string>({ max: IDENTITY_CACHE.maxEntries, ttl: IDENTITY_CACHE.ttlMs });

  constructor(private readonly db: SqlStore) {}

  /** Keys held by the cache, for its gauge. */
  get cacheSize(): number {
    return this.cache.size;
  }

  /** Sets identity_id on every event that carries a key; returns the merges it made. */
  async resolve(workspaceId: string, events: ClassifiedEventV1[]): Promise<Merge[]> {
    const keysOf = events.map(keysOfEvent);
    const allKeys = [...new Set(keysOf.flat())];
    if (allKeys.length === 0) return [];
    // Read each key once: an entry may age out between two reads of it.
    const cached = new Map<KeyRef, string>();
    for (const k of allKeys) {
      const id = this.cache.get(k);
      if (id === undefined) break;
      cached.set(k, id);
    }
    if (cached.size === allKeys.length && keysOf.every((keys) => new Set(keys.map((k) => cached.get(k))).size <= 1)) {
      events.forEach((event, i) => (event.identity_id = keysOf[i]?.[0] ? (cached.get(keysOf[i][0]) as string) : null));
      return [];
    }

    const { known, merges } = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`identity:${workspaceId}`]);
      const { rows } = await tx.query<{ ref: KeyRef; identity_id: string; first_seen: string }>(
        `SELECT kind || ':' || key_hash AS ref, identity_id::text AS identity_id,
                (SELECT extract(epoch FROM min(o.created_at))::text FROM identity_keys o
                  WHERE o.workspace_id = k.workspace_id AND o.identity_id = k.identity_id) AS first_seen
           FROM identity_keys k WHERE workspace_id = $1 AND kind || ':' || key_hash = ANY($2::text[])`,
        [workspaceId, allKeys],
      );
      const known = new Map<KeyRef, string>(rows.map((r) => [r.ref, r.identity_id]));
      // Age of each identity: on a merge the oldest wins, so established history keeps its id.
      const firstSeen = new Map<string, number>(rows.map((r) => [r.identity_id, Number(r.first_seen)]));
      const inserted = new Map<KeyRef, string>();
      const merges: Merge[] = [];
      let created = 0;
      for (const keys of keysOf) {
        if (keys.length === 0) continue;
        const ids = [...new Set(keys.flatMap((k) => (known.has(k) ? [known.get(k) as string] : [])))].sort(
          (a, b) => (firstSeen.get(a) as number) - (firstSeen.get(b) as number) || a.localeCompare(b),
        );
        let winner = ids[0];
        if (!winner) {
          winner = randomUUID();
          // Identities born in this batch are younger than any stored one, in order of birth.
          firstSeen.set(winner, Number.MAX_SAFE_INTEGER - 1_000_000 + created++);
        }
        for (const loser of ids.slice(1)) {
          merges.push({ from: loser, into: winner });
          for (const [k, id] of known) if (id === loser) known.set(k, winner);
          for (const [k, id] of inserted) if (id === loser) inserted.set(k, winner);
        }
        for (const k of keys) {
          if (!known.has(k)) {
            known.set(k, winner);
            inserted.set(k, winner);
          }
        }
      }
      if (inserted.size > 0) {
        const refs = [...inserted.keys()];
        await tx.query(
          `INSERT INTO identity_keys (workspace_id, kind, key_hash, identity_id)
           SELECT $1, split_part(ref, ':', 1), substr(ref, strpos(ref, ':') + 1), id::uuid
             FROM unnest($2::text[], $3::text[]) AS t(ref, id)
           ON CONFLICT (workspace_id, kind, key_hash) DO NOTHING`,
          [workspaceId, refs, refs.map((r) => inserted.get(r) as string)],
        );
      }
      for (const merge of merges) {
        await tx.query('UPDATE identity_keys SET identity_id = $3 WHERE workspace_id = $1 AND identity_id = $2', [workspaceId, merge.from, merge.into]);
        await tx.query(
          `INSERT INTO identity_merges (workspace_id, from_identity_id, into_identity_id) VALUES ($1, $2, $3)
           ON CONFLICT (workspace_id, from_identity_id) DO UPDATE SET into_identity_id = EXCLUDED.into_identity_id`,
          [workspaceId, merge.from, merge.into],
        );
      }
      return { known, merges };
    });

    if (merges.length > 0) {
      // Keys of a merged-away identity now point at the winner (rare: a walk of the cache is fine).
      const into = new Map(merges.map((m) => [m.from, m.into]));
      const moved: [KeyRef, string][] = [];
      for (const [k, id] of this.cache.entries()) if (into.has(id)) moved.push([k, into.get(id) as string]);
      for (const [k, id] of moved) this.cache.set(k, id, { noUpdateTTL: true });
    }
    for (const [k, id] of known) this.cache.set(k, id);
    events.forEach((event, i) => (event.identity_id = keysOf[i]?.[0] ? (known.get(keysOf[i][0]) as string) : null));
    return merges;
  }

}

function keysOfEvent(event: ClassifiedEventV1): KeyRef[] {
  const keys: KeyRef[] = [];
  if (event.anonymous_id) keys.push(`anon:${event.anonymous_id}`);
  if (event.email_hash) keys.push(`email:${event.email_hash}`);
  if (event.phone) keys.push(`phone:${sha256Hex(event.phone)}`);
  return keys;
}
