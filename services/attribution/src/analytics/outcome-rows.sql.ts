// What every credited read (/metrics credit and customer figures, /paths, /attribution/coverage)
// starts from: the outcomes of a window as the read model keeps them (outcome_journeys), each with
// its journey. Rows are read with FINAL, the newest computation of each outcome; only the sorting
// key (website, kind, time) filters before FINAL, so a condition on anything a recomputation may
// change never picks an older row.
import { DIRECT_CHANNEL } from '@sightline/proto-schemas';
import { touchField, unattributedValue, type TouchField } from './journey-fields';

export interface OutcomeScan {
  /** conversions (tracked and imported) or milestones (CRM and lifecycle stages). */
  source: 'conversions' | 'milestones';
  /** Journey fields read (`j_<field>` arrays); started_at is always read. */
  fields?: readonly TouchField[];
  /** SQL conditions on the outcome's columns (see OUTCOME_COLUMNS), parameterised by the caller. */
  where?: string[];
}

/**
 * Columns of an outcome row: outcome_id, person, occurred_at, value, event_type, event_name, stage,
 * email, origin, relationship_started_at, relationship_began, has_visitor, n (journey length) and
 * the journey arrays asked for.
 */
const OUTCOME_COLUMNS = [
  'outcome_id', 'person', 'occurred_at', 'value', 'event_type', 'event_name', 'stage', 'email', 'origin',
  'relationship_started_at', 'relationship_began', 'has_visitor',
] as const;

const journeyFields = (fields: readonly TouchField[] | undefined): TouchField[] => [...new Set<TouchField>(['started_at', ...(fields ?? [])])];

/** Outcome rows in [from, to) of the website (params: website, from, to). */
export function outcomeRowsSql(scan: OutcomeScan): string {
  const kind = scan.source === 'milestones' ? 'milestone' : 'conversion';
  const columns = [...OUTCOME_COLUMNS, 'touches AS n', ...journeyFields(scan.fields).map((f) => `j_${f}`)];
  const where = (scan.where ?? []).map((w) => `(${w})`);
  return `SELECT * FROM (
    SELECT ${columns.join(', ')}
      FROM outcome_journeys FINAL
     WHERE website_id = {website:UUID} AND kind = '${kind}'
       AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
  )${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
}

export interface TouchRows {
  /**
   * Only the first and the last touch of each journey are needed (first_touch and last_touch
   * credit): the rows are those two whatever the journey's length, so the read does not grow
   * with the history a lookback reaches.
   */
  endpoints?: boolean;
  /**
   * Direct touches dropped from every journey array before anything reads them (exclude_direct);
   * a journey of only Direct touches keeps them all. Needs `channel` among the scan's fields.
   */
  excludeDirect?: boolean;
  /** Extra columns computed per outcome (`, expr AS name`), and joins onto the outcome row `o`. */
  extraColumns?: string;
  joins?: string;
}

/**
 * An outcome's touches as rows: outcomeRowsSql's columns plus, per touch, `x_<field>` for the fields
 * asked for, `i` (its position, from 1) and `tn` (how many touches the outcome has as rows). An
 * outcome without a journey is one Unattributed touch. `decay_sum` is what time decay divides by.
 */
export function outcomeTouchesSql(scan: OutcomeScan, options: TouchRows = {}): string {
  const fields = journeyFields(scan.fields);
  const touches = (f: TouchField): string => (options.endpoints ? `if(o.n = 1, [o.j_${f}[1]], [o.j_${f}[1], o.j_${f}[o.n]])` : `o.j_${f}`);
  const padded = fields.map((f) => `if(o.n = 0, [${unattributedValue(f)}], ${touches(f)}) AS tj_${f}`);
  // ARRAY JOIN aliases are not part of `*`: name them.
  return `SELECT *, ${fields.map((f) => touchField('x', f)).join(', ')}, i FROM (
    SELECT o.*, length(tj_started_at) AS tn,
           ${options.endpoints ? '0. AS decay_sum' : 'arraySum(s -> pow(0.5, (toUnixTimestamp64Milli(o.occurred_at) - toUnixTimestamp64Milli(s)) / {half_life_ms:Float64}), o.j_started_at) AS decay_sum'},
           ${padded.join(',\n           ')}${options.extraColumns ?? ''}
      FROM (${options.excludeDirect ? withoutDirectSql(outcomeRowsSql(scan), fields) : outcomeRowsSql(scan)}) AS o
      ${options.joins ?? ''}
  )
  ARRAY JOIN ${fields.map((f) => `tj_${f} AS ${touchField('x', f)}`).join(', ')}, arrayEnumerate(tj_started_at) AS i`;
}

/** The outcome rows of `rowsSql` with Direct touches dropped from the journey arrays of `fields` and n recounted, unless only Direct is left. */
function withoutDirectSql(rowsSql: string, fields: readonly TouchField[]): string {
  const keep = `if(arrayExists(c -> c != '${DIRECT_CHANNEL}', j_channel), arrayMap(c -> c != '${DIRECT_CHANNEL}', j_channel), arrayMap(c -> 1, j_channel))`;
  const replaced = [...fields.map((f) => `arrayFilter((v, k) -> k, j_${f}, kept) AS j_${f}`), 'toUInt32(arraySum(kept)) AS n'];
  return `SELECT * EXCEPT (kept) REPLACE (${replaced.join(', ')}) FROM (SELECT *, ${keep} AS kept FROM (${rowsSql}))`;
}

/** Time decay's half-life. */
export const HALF_LIFE_MS = 7 * 86_400_000;

/** When the website's tracking began: its first session, NULL without one (read in key order: the first rows only). */
export const TRACKING_STARTED_SQL = `(SELECT toNullable(started_at) FROM touches WHERE website_id = {website:UUID} ORDER BY started_at LIMIT 1)`;
