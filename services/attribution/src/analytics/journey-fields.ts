// The fields a journey touch carries, and the names every analytics read uses for them. The read
// model keeps a journey as parallel arrays `j_<field>`; a credited read ARRAY JOINs the arrays it
// needs into columns `x_<field>` (one row per touch), so a dimension is the same expression
// whichever read uses it.

/** Fields a journey touch carries, in the order the read model stores them. */
export const TOUCH_FIELDS = [
  'started_at', 'session_id', 'channel', 'source', 'medium', 'campaign', 'term', 'content', 'referrer_domain',
  'landing_page', 'device_type', 'browser', 'operating_system', 'country', 'region', 'city', 'is_paid', 'ad_platform',
] as const;

export type TouchField = (typeof TOUCH_FIELDS)[number];

/** The column holding one touch's field after the journey is ARRAY JOINed (`x` by default). */
export function touchField(prefix: string, field: TouchField): string {
  return `${prefix}_${field}`;
}

/** The touch fields an SQL text reads through touchField('x', ...) (so only those arrays are read). */
export function touchFieldsIn(sql: string): TouchField[] {
  return TOUCH_FIELDS.filter((f) => new RegExp(`\\bx_${f}\\b`).test(sql));
}

/** The label every touch field takes for an outcome with no touch at all. */
export const UNATTRIBUTED = 'Unattributed';

/** The value an Unattributed touch has for a field. */
export function unattributedValue(field: TouchField): string {
  if (field === 'started_at') return "toDateTime64(0, 3, 'UTC')";
  if (field === 'is_paid') return 'toUInt8(0)';
  if (field === 'session_id') return "''";
  return `'${UNATTRIBUTED}'`;
}

/** Person of each merged identity id of the workspace (params: workspace). Ids never merged have no row. */
export const ROOTS_SQL = `(SELECT identity_id, argMax(root_id, version) AS root_id
    FROM identity_roots WHERE workspace_id = {workspace:UUID} GROUP BY identity_id)`;
