// The SQL every credited read shares: outcomes (conversions or milestones) in the window, each with
// its journey, the person's touches (sessions, every device through the identity graph) that
// started in the lookback before it, oldest first. Values are bound as parameters, never spliced.
//
// Rules the oracle (test/oracle) restates independently:
// - person = the identity's merge root; a conversion without an identity is a person of its own.
// - a touch is in the journey when conversion_time - lookback <= started_at <= conversion_time.
// - touches are ordered by (started_at, session_id); one row per session_id.

/** Fields a journey touch can carry (a query asks only for those it reads: narrow tuples are fast). */
export const TOUCH_FIELDS = [
  'started_at', 'session_id', 'channel', 'source', 'medium', 'campaign', 'term', 'content', 'referrer_domain',
  'landing_page', 'device_type', 'browser', 'operating_system', 'country', 'region', 'city', 'is_paid', 'ad_platform',
] as const;

export type TouchField = (typeof TOUCH_FIELDS)[number];

/** A field of a touch tuple (tuples are named, so any subset of fields reads the same way). */
export function touchField(tuple: string, field: TouchField): string {
  return `tupleElement(${tuple}, '${field}')`;
}

/** The touch fields an SQL text reads through touchField (so the journey carries only those). */
export function touchFieldsIn(sql: string): TouchField[] {
  return TOUCH_FIELDS.filter((f) => sql.includes(`'${f}')`));
}

const ALWAYS: readonly TouchField[] = ['started_at', 'session_id'];

function tupleFields(fields: readonly TouchField[] | undefined): TouchField[] {
  const wanted = new Set<TouchField>([...ALWAYS, ...(fields ?? TOUCH_FIELDS)]);
  return TOUCH_FIELDS.filter((f) => wanted.has(f));
}

const fieldType = (f: TouchField): string => (f === 'started_at' ? "DateTime64(3, 'UTC')" : f === 'is_paid' ? 'UInt8' : 'String');

/** The named tuple type of touches carrying `fields`. */
function tupleType(fields: readonly TouchField[]): string {
  return `Tuple(${fields.map((f) => `${f} ${fieldType(f)}`).join(', ')})`;
}

/** The label every touch field takes for an outcome with no touch at all. */
export const UNATTRIBUTED = 'Unattributed';

/** Person of each merged identity id of the workspace (params: workspace). */
export const ROOTS_SQL = `(SELECT identity_id, argMax(root_id, version) AS root_id
    FROM identity_roots WHERE workspace_id = {workspace:UUID} GROUP BY identity_id)`;

export interface OutcomeScan {
  /** conversions (tracked and imported) or milestones (CRM and lifecycle stages). */
  source: 'conversions' | 'milestones';
  /** Touch fields the journey carries besides started_at and session_id; default all. */
  fields?: readonly TouchField[];
  /** SQL conditions on the outcome row (columns of outcomeColumns), parameterised by the caller. */
  where?: string[];
}

/**
 * Outcome rows in [from, to) of the website (params: website, workspace, from, to, lookback_days).
 * Columns: outcome_id, person, occurred_at, value, event_type, event_name, stage, email, origin,
 * relationship_started_at, has_visitor.
 */
export function outcomesSql(scan: OutcomeScan): string {
  const where = (scan.where ?? []).map((w) => ` AND (${w})`).join('');
  if (scan.source === 'milestones') {
    return `SELECT o.*, if(o.identity_id = '', concat('milestone:', o.outcome_id), if(r.root_id = '', o.identity_id, r.root_id)) AS person
      FROM (
        SELECT milestone_id AS outcome_id, identity_id, occurred_at, ifNull(amount, 0) AS value,
               '' AS event_type, '' AS event_name, toString(stage) AS stage, email, 'import' AS origin,
               CAST(NULL AS Nullable(DateTime64(3, 'UTC'))) AS relationship_started_at,
               identity_id != '' AS has_visitor
          FROM milestones
         WHERE website_id = {website:UUID} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
         ORDER BY milestone_id LIMIT 1 BY milestone_id
      ) AS o
      LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = o.identity_id
      WHERE 1${where}`;
  }
  return `SELECT o.*, if(o.identity_id = '', concat('conversion:', o.outcome_id), if(r.root_id = '', o.identity_id, r.root_id)) AS person
    FROM (
      SELECT toString(c.conversion_id) AS outcome_id, c.identity_id AS identity_id, c.occurred_at AS occurred_at,
             ifNull(if(v.has_value = 1, v.sales_value, c.revenue), 0) AS value,
             toString(c.event_type) AS event_type, c.event_name AS event_name, '' AS stage, c.email AS email,
             toString(c.origin) AS origin, c.relationship_started_at AS relationship_started_at,
             c.identity_id != '' AS has_visitor
        FROM (
          SELECT * FROM conversions
           WHERE website_id = {website:UUID} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
           ORDER BY conversion_id LIMIT 1 BY conversion_id
        ) AS c
        LEFT JOIN (
          -- tuple(): argMax skips NULL arguments, so a cleared sales value would revive the one before it.
          SELECT conversion_id, argMax(tuple(sales_value), changed_at).1 AS sales_value, 1 AS has_value
            FROM conversion_outcomes WHERE website_id = {website:UUID}
           GROUP BY conversion_id
          HAVING sales_value IS NOT NULL
        ) AS v ON v.conversion_id = c.conversion_id
    ) AS o
    LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = o.identity_id
    WHERE 1${where}`;
}

/** The one touch of an outcome with no journey: every label Unattributed, not paid. */
export function unattributedTouch(fields?: readonly TouchField[]): string {
  const list = tupleFields(fields);
  const value = (f: TouchField): string => (f === 'started_at' ? "toDateTime64(0, 3, 'UTC')" : f === 'is_paid' ? 'toUInt8(0)' : f === 'session_id' ? "''" : `'${UNATTRIBUTED}'`);
  return `CAST(tuple(${list.map(value).join(', ')}) AS ${tupleType(list)})`;
}

/**
 * Outcomes with their journeys: outcomesSql's columns plus `journey` (array of touch tuples,
 * oldest first, inside the lookback) and `has_sessions` (the person has any session on the
 * website up to the outcome, inside the lookback or not). Params as outcomesSql plus lookback_days.
 */
export function outcomeJourneysSql(scan: OutcomeScan): string {
  const fields = tupleFields(scan.fields);
  const columns = (f: TouchField): string => (f === 'started_at' ? 'min(s.started_at)' : f === 'session_id' ? 's.session_id' : f === 'is_paid' ? 'toUInt8(any(s.is_paid))' : `toString(any(s.${f}))`);
  const started = touchField('x', 'started_at');
  return `WITH outcomes AS (${outcomesSql(scan)}),
  person_touches AS (
    SELECT person, arraySort(x -> (${started}, ${touchField('x', 'session_id')}), groupArray(touch)) AS touches
      FROM (
        -- One touch per (person, session): rows of a session under several merged identity ids combine.
        SELECT person, CAST(tuple(${fields.map(columns).join(', ')}) AS ${tupleType(fields)}) AS touch
          FROM (
            SELECT if(r.root_id = '', s.identity_id, r.root_id) AS person, s.*
              FROM (
                SELECT identity_id, ${fields.join(', ')} FROM touches
                 WHERE website_id = {website:UUID} AND started_at >= {scan_from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}
              ) AS s
              LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = s.identity_id
          ) AS s
         WHERE person IN (SELECT person FROM outcomes)
         GROUP BY person, s.session_id
      )
     GROUP BY person
  )
  SELECT o.*,
         arrayFilter(x -> ${started} <= o.occurred_at AND ${started} >= o.occurred_at - toIntervalDay({lookback_days:UInt32}), p.touches) AS journey,
         arrayExists(x -> ${started} <= o.occurred_at, p.touches) AS has_sessions
    FROM outcomes AS o
    LEFT JOIN person_touches AS p ON p.person = o.person`;
}

/**
 * Parameters outcomeJourneysSql binds. Touches are scanned from the lookback before the window;
 * `allHistory` scans every earlier touch, so has_sessions also sees sessions older than the lookback.
 */
export function journeyParams(p: { websiteId: string; workspaceId: string; from: Date; to: Date; lookbackDays: number; allHistory?: boolean }): Record<string, unknown> {
  const scanFrom = p.allHistory ? new Date(0) : new Date(p.from.getTime() - p.lookbackDays * 86_400_000);
  return { website: p.websiteId, workspace: p.workspaceId, from: p.from, to: p.to, lookback_days: p.lookbackDays, scan_from: scanFrom };
}
