// traffic_sessions rows: one per session with its visitor (person) resolved through the identity
// roots, from the session's rows in touches. One statement for every scope: the sessions of a
// consumer's batch, the sessions of a merged group, or a month of a website (rebuild).
// A session's start is the earliest of its rows; each attribute (equal on every row of a session)
// is the smallest value, and the person the smallest of its rows' people, so the row never depends
// on which copy was read first.
import { ROOTS_SQL } from '../analytics/journey-fields';

export type SessionScope =
  /** Sessions of a batch: these session ids of these identities on one website. */
  | { by: 'sessions'; websiteId: string; identityIds: readonly string[]; sessionIds: readonly string[] }
  /** Every session of these identities, on every website of the workspace (after a merge). */
  | { by: 'identities'; identityIds: readonly string[] }
  /** Sessions of one website that started in [from, to). */
  | { by: 'range'; websiteId: string; from: Date; to: Date };

const ATTRIBUTES = ['channel', 'source', 'medium', 'campaign', 'term', 'content', 'referrer_domain', 'landing_page', 'device_type', 'browser',
  'operating_system', 'country', 'region', 'city', 'is_paid', 'ad_platform'] as const;

export const TRAFFIC_COLUMNS = ['website_id', 'workspace_id', 'started_at', 'session_id', 'identity_id', 'person', ...ATTRIBUTES, 'computed_at'] as const;

function source(scope: SessionScope): string {
  const columns = `website_id, workspace_id, started_at, session_id, identity_id, ${ATTRIBUTES.join(', ')}`;
  switch (scope.by) {
    case 'sessions':
      return `SELECT ${columns} FROM touches_by_identity
               WHERE workspace_id = {workspace:UUID} AND identity_id IN {ids:Array(String)} AND website_id = {website:UUID}
                 AND session_id IN {sessions:Array(String)}`;
    case 'identities':
      return `SELECT ${columns} FROM touches_by_identity WHERE workspace_id = {workspace:UUID} AND identity_id IN {ids:Array(String)}`;
    case 'range':
      return `SELECT ${columns} FROM touches
               WHERE website_id = {website:UUID} AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}`;
  }
}

export function sessionScopeParams(scope: SessionScope): Record<string, unknown> {
  switch (scope.by) {
    case 'sessions': return { website: scope.websiteId, ids: [...scope.identityIds], sessions: [...scope.sessionIds] };
    case 'identities': return { ids: [...scope.identityIds] };
    case 'range': return { website: scope.websiteId, from: scope.from, to: scope.to };
  }
}

/**
 * INSERT of the scope's traffic rows (params: workspace, computed_at, sessionScopeParams). No
 * deduplication token: an INSERT ... SELECT cannot take one as a bound parameter on every server
 * version, and a retried insert only adds a copy of the same rows, which FINAL reads once.
 */
export function insertTrafficSql(scope: SessionScope): string {
  return `INSERT INTO traffic_sessions (${TRAFFIC_COLUMNS.join(', ')})
SELECT website_id, any(workspace_id), min(started_at), session_id, min(identity_id), min(person),
       ${ATTRIBUTES.map((a) => `min(${a})`).join(', ')}, {computed_at:DateTime64(6, 'UTC')}
  FROM (
    SELECT t.*, if(r.root_id = '', t.identity_id, r.root_id) AS person
      FROM (${source(scope)}) AS t
      LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = t.identity_id
  )
 GROUP BY website_id, session_id`;
}
