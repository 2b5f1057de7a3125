// One value-decoding policy for both SQL drivers, so service code sees the same JS types on
// PostgreSQL (`pg`) and PGlite. Chosen to be exact: bigint and numeric stay strings (cast in SQL,
// e.g. `count(*)::int`, when a number is wanted), a calendar date stays 'YYYY-MM-DD' (a Date
// would drag in a time zone), timestamps become Date, json/jsonb are parsed.

export const OID = {
  int8: 20,
  date: 1082,
  int8Array: 1016,
  dateArray: 1182,
} as const;

const keepText = (value: string): string => value;

/** Parses a one-dimensional array literal of values that never need quoting (dates). */
function parsePlainArray(value: string): (string | null)[] {
  const inner = value.slice(1, -1);
  if (inner === '') return [];
  return inner.split(',').map((item) => (item === 'NULL' ? null : item));
}

/** Parser overrides keyed by type OID; everything else keeps the driver's default. */
export const sqlTextParsers: Readonly<Record<number, (value: string) => unknown>> = {
  [OID.int8]: keepText,
  [OID.date]: keepText,
  [OID.dateArray]: parsePlainArray,
};

/** PGlite applies a scalar parser to array elements too, so it needs only the scalar overrides. */
export const pgliteParsers: Readonly<Record<number, (value: string) => unknown>> = {
  [OID.int8]: keepText,
  [OID.date]: keepText,
};
