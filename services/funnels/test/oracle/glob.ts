// Step matcher patterns, restated: `*` is any run of characters, everything else literal, whole value.
export function matches(pattern: string, value: string | null): boolean {
  if (value === null || value === '') return false;
  let p = 0;
  let v = 0;
  let star = -1;
  let mark = 0;
  while (v < value.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === value[v]) {
      p += 1;
      v += 1;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p;
      mark = v;
      p += 1;
    } else if (star !== -1) {
      p = star + 1;
      mark += 1;
      v = mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}
