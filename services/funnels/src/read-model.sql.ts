// The reads that keep the read model current: the facts of a set of people (their events with one
// step mask per funnel, their revenue facts), the merge groups of identity ids, and the identity
// ranges a build walks through. Masks come from the same SQL as the event path (eventMaskSql).
import type { FunnelDefinition } from './definition';
import { eventMaskSql, Params, type CompiledQuery } from './funnel.sql';

/** Which identities' facts to read. */
export type FactSelection =
  /** These identity ids (whole merge groups), optionally only facts in [fromMs, toMs]. */
  | { kind: 'identities'; ids: readonly string[]; fromMs?: number; toMs?: number }
  /** Every identity id in [lo, hi) (null: unbounded) that no merge touched. */
  | { kind: 'range'; lo: string | null; hi: string | null };

interface Scope {
  websiteId: string;
  workspaceId: string;
}

function selectionSql(selection: FactSelection, column: string, time: string | null, params: Record<string, unknown>): string {
  if (selection.kind === 'identities') {
    params['ids'] = selection.ids;
    const parts = [`${column} IN {ids:Array(String)}`];
    if (time && selection.fromMs !== undefined) {
      params['facts_from'] = new Date(selection.fromMs);
      parts.push(`${time} >= {facts_from:DateTime64(3, 'UTC')}`);
    }
    if (time && selection.toMs !== undefined) {
      params['facts_to'] = new Date(selection.toMs);
      parts.push(`${time} <= {facts_to:DateTime64(3, 'UTC')}`);
    }
    return parts.join(' AND ');
  }
  const parts = [`${column} NOT IN (SELECT identity_id FROM identity_roots WHERE workspace_id = {workspace:UUID})`];
  if (selection.lo !== null) {
    params['lo'] = selection.lo;
    parts.push(`${column} >= {lo:String}`);
  }
  if (selection.hi !== null) {
    params['hi'] = selection.hi;
    parts.push(`${column} < {hi:String}`);
  }
  return parts.join(' AND ');
}

/**
 * Events of the selection that matter to some funnel: (identity, ms, id hash, behavioural, one mask
 * per funnel with steps in bits 0..9 and the audience filter in bit 15). Under strict every
 * behavioural event matters (it may sit between two steps).
 */
export function factsQuery(definitions: readonly FunnelDefinition[], scope: Scope, selection: FactSelection): CompiledQuery {
  const params = new Params();
  const masks = definitions.map((d) => eventMaskSql(d, params) ?? 'toUInt32(0)');
  Object.assign(params.values, { website: scope.websiteId, workspace: scope.workspaceId });
  const strict = definitions.some((d) => d.step_order === 'strict');
  const where = selectionSql(selection, 'identity_id', 'occurred_at', params.values);
  return {
    sql: `SELECT identity_id AS i, toUnixTimestamp64Milli(occurred_at) AS ts, toString(cityHash64(event_id)) AS e, event_type != 'identify' AS b, [${masks.join(', ')}] AS m
  FROM identity_events FINAL
 WHERE website_id = {website:UUID} AND ${where}
   AND (arrayExists(x -> bitAnd(x, 1023) != 0, m)${strict ? ' OR b' : ''})`,
    params: params.values,
  };
}

/**
 * Revenue facts of the selection among `stages`: once per milestone (its earliest time), the
 * identity it names, else the identity that first carried its email (README "Where revenue facts
 * come from").
 */
export function revenueFactsQuery(stages: readonly string[], scope: Scope, selection: FactSelection): CompiledQuery {
  const params: Record<string, unknown> = { website: scope.websiteId, workspace: scope.workspaceId, stages };
  const where = selectionSql(selection, 'i', null, params);
  const time: string[] = [];
  if (selection.kind === 'identities' && selection.fromMs !== undefined) {
    params['facts_from_ms'] = selection.fromMs;
    time.push('ts >= {facts_from_ms:Int64}');
  }
  if (selection.kind === 'identities' && selection.toMs !== undefined) {
    params['facts_to_ms'] = selection.toMs;
    time.push('ts <= {facts_to_ms:Int64}');
  }
  return {
    sql: `SELECT i, ts, e, stage FROM (
  SELECT if(f.named != '', f.named, em.identity_id) AS i, f.ts AS ts, f.e AS e, f.fact_stage AS stage
    FROM (
      SELECT toString(cityHash64(milestone_id)) AS e, toUnixTimestamp64Milli(min(occurred_at)) AS ts, any(stage) AS fact_stage, max(identity_id) AS named, max(email_hash) AS fact_email
        FROM revenue_events WHERE website_id = {website:UUID} AND stage IN {stages:Array(String)} GROUP BY milestone_id
    ) AS f
    LEFT JOIN (SELECT email_hash, min(identity_id) AS identity_id FROM emails WHERE workspace_id = {workspace:UUID} GROUP BY email_hash) AS em
      ON em.email_hash = f.fact_email
) WHERE i != '' AND ${where}${time.length > 0 ? ` AND ${time.join(' AND ')}` : ''}`,
    params,
  };
}

/** Merged identity ids of the given ids' groups, with their person (the group's root). */
export function groupsQuery(workspaceId: string, ids: readonly string[]): CompiledQuery {
  return {
    sql: `WITH r AS (SELECT identity_id, argMax(root_id, version) AS root FROM identity_roots WHERE workspace_id = {workspace:UUID} GROUP BY identity_id)
SELECT identity_id AS i, root FROM r WHERE identity_id IN {ids:Array(String)} OR root IN (SELECT root FROM r WHERE identity_id IN {ids:Array(String)})`,
    params: { workspace: workspaceId, ids },
  };
}

/** Every merge group of a workspace: its person and its identity ids. */
export function allGroupsQuery(workspaceId: string): CompiledQuery {
  return {
    sql: `SELECT root, groupArray(identity_id) AS ids FROM (
  SELECT identity_id, argMax(root_id, version) AS root FROM identity_roots WHERE workspace_id = {workspace:UUID} GROUP BY identity_id
) GROUP BY root ORDER BY root`,
    params: { workspace: workspaceId },
  };
}

/**
 * Identity ids splitting a website's events into ranges of about `perRange` events each (sorted,
 * each the first id of its range after the first). Reads only the identity column, in key order.
 */
export function rangeBoundsQuery(websiteId: string, perRange: number): CompiledQuery {
  return {
    sql: `SELECT if(empty(c), 0, c[length(c)]) AS events, arrayFilter((id, d) -> d != 0, ids, arrayDifference(b)) AS bounds
  FROM (
    SELECT groupArray(identity_id) AS ids, arrayCumSum(groupArray(n)) AS c, arrayMap(x -> toInt64(intDiv(x - 1, {per:UInt64})), c) AS b
      FROM (SELECT identity_id, count() AS n FROM identity_events WHERE website_id = {website:UUID} GROUP BY identity_id ORDER BY identity_id)
  )`,
    params: { website: websiteId, per: perRange },
  };
}

const DIMENSIONS = ['channel', 'source', 'medium', 'campaign', 'utm_term', 'utm_content', 'referrer_domain', 'landing_page',
  'country', 'region', 'city', 'device_type', 'browser', 'operating_system'] as const;

/**
 * Rewrites a website's person_touches rows of the people the identities belong to (their whole
 * merge groups must be among `identities`), or of all its people when `identities` is null. Each
 * session once: its earliest start, the attributes of its earliest hit; ordered by (start, session).
 */
export function personTouchesInsert(workspaceId: string, websiteId: string, identities: readonly string[] | null, version: number): CompiledQuery {
  const params: Record<string, unknown> = { workspace: workspaceId, website: websiteId, version };
  const where: string[] = ['s.website_id = {website:UUID}'];
  if (identities !== null) {
    params['ids'] = identities;
    where.push('s.identity_key IN arrayMap(x -> reinterpretAsUInt128(sipHash128(x)), {ids:Array(String)})');
  }
  return {
    sql: `INSERT INTO person_touches (website_id, person, starts, session_keys, ${DIMENSIONS.join(', ')}, version)
SELECT website_id, person, arrayMap(x -> x.1, z), arrayMap(x -> x.2, z), ${DIMENSIONS.map((_, i) => `arrayMap(x -> x.3.${i + 1}, z)`).join(', ')}, {version:UInt64}
  FROM (
    SELECT website_id, person, arraySort(groupArray((st, sk, d))) AS z
      FROM (
        SELECT s.website_id AS website_id, if(r.root != '', r.root, s.identity_id) AS person, s.session_key AS sk,
               min(toUnixTimestamp64Milli(s.started_at)) AS st, argMin((${DIMENSIONS.map((d) => `s.${d}`).join(', ')}), s.first_hit_at) AS d
          FROM identity_sessions AS s
          LEFT JOIN (SELECT identity_id, argMax(root_id, version) AS root FROM identity_roots WHERE workspace_id = {workspace:UUID} GROUP BY identity_id) AS r
            ON r.identity_id = s.identity_id
         WHERE ${where.join(' AND ')}
         GROUP BY website_id, person, sk
      )
     GROUP BY website_id, person
  )`,
    params,
  };
}
