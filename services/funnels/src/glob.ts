// Step matchers are patterns over a whole value where `*` matches any run of characters and every
// other character is literal (case-sensitive). ClickHouse evaluates them as LIKE patterns (bound as
// parameters); the checks below decide, before a funnel is stored, whether a pattern can match
// anything at all.

/** The LIKE pattern equal to a matcher: `%`, `_` and `\` are escaped, `*` becomes `%`. */
export function globToLike(pattern: string): string {
  return pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}

/** Whether the matcher matches the whole value. */
export function globMatches(pattern: string, value: string): boolean {
  const source = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*');
  return new RegExp(`^${source}$`).test(value);
}

/** The literal characters before the first `*` (the whole pattern when it has none). */
export function literalPrefix(pattern: string): string {
  const star = pattern.indexOf('*');
  return star === -1 ? pattern : pattern.slice(0, star);
}

/** Literal characters of the pattern (what every match must contain at least). */
export function literalLength(pattern: string): number {
  return pattern.replace(/\*/g, '').length;
}

/**
 * Whether some value starting with one of `prefixes` can match the pattern: its literal start must
 * agree with a prefix for as long as both run (a `*` after it lets the value continue freely).
 */
export function canStartWith(pattern: string, prefixes: readonly string[]): boolean {
  const head = literalPrefix(pattern);
  const open = pattern.includes('*');
  return prefixes.some((prefix) => head.startsWith(prefix) || (open && prefix.startsWith(head)));
}
