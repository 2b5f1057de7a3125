// Step matchers are patterns over a whole value where `*` matches any run of characters and every
// other character is literal (case-sensitive). ClickHouse evaluates them as LIKE patterns (bound as
// parameters); the checks below decide, before a funnel is stored, whether a pattern can match
// anything at all.

/**
 * The LIKE pattern equal to a matcher: `%`, `_` and `\` are escaped, `*` becomes `%`. ClickHouse
 * runs LIKE without backtracking (fixed strings by substring search, other patterns through RE2,
 * which is linear in the value), so a long value or a pattern of many `%` cannot blow up there.
 */
export function globToLike(pattern: string): string {
  return pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}

/**
 * Whether the matcher matches the whole value. No RegExp: a backtracking regex of `.*` runs took
 * exponential time in the number of `*`. Greedy segments instead: the part before the first `*`
 * is a prefix, the part after the last a suffix, and each part between is found at its leftmost
 * place after the previous one (leftmost leaves the most room for the rest, so it is exact); one
 * indexOf per part, never a retry.
 */
export function globMatches(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  const end = value.length - last.length;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    if (part === '') continue;
    const found = value.indexOf(part, at);
    if (found === -1 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
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
