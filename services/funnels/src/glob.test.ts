// The step matcher against a plain reference, and its running time on the inputs that made the old
// backtracking RegExp exponential.
import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import { globMatches } from './glob';

/** Reference: dynamic programming over (pattern position, value position), obviously right. */
function reference(pattern: string, value: string): boolean {
  // row[j]: pattern[0..i) matches value[0..j)
  let row = new Array<boolean>(value.length + 1).fill(false);
  row[0] = true;
  for (const c of pattern) {
    const next = new Array<boolean>(value.length + 1).fill(false);
    for (let j = 0; j <= value.length; j += 1) {
      if (c === '*') next[j] = row[j] === true || (j > 0 && next[j - 1] === true);
      else next[j] = j > 0 && row[j - 1] === true && value[j - 1] === c;
    }
    row = next;
  }
  return row[value.length] === true;
}

describe('globMatches', () => {
  it('agrees with the reference on random patterns and values', () => {
    // A small alphabet makes near-misses and overlapping parts common.
    const text = (max: number) => fc.string({ unit: fc.constantFrom('a', 'b', '.', '\\'), maxLength: max });
    const pattern = fc.string({ unit: fc.constantFrom('a', 'b', '*', '.', '\\'), maxLength: 12 });
    fc.assert(fc.property(pattern, text(20), (p, v) => globMatches(p, v) === reference(p, v)), { numRuns: 5_000 });
    // Values built from the pattern's own parts, so matches are frequent too.
    const built = pattern.chain((p) => fc.tuple(fc.constant(p), fc.array(text(3), { maxLength: p.split('*').length })
      .map((fill) => p.split('*').map((part, i) => `${part}${fill[i] ?? ''}`).join(''))));
    fc.assert(fc.property(built, ([p, v]) => globMatches(p, v) === reference(p, v)), { numRuns: 5_000 });
  });

  it('treats every character but * literally and matches the whole value', () => {
    expect(globMatches('a.c', 'abc')).toBe(false);
    expect(globMatches('(a|b)', '(a|b)')).toBe(true);
    expect(globMatches('*ab*ab*', 'abab')).toBe(true);
    expect(globMatches('*ab*ab*', 'aba')).toBe(false);
    expect(globMatches('ab*ba', 'aba')).toBe(false); // prefix and suffix may not overlap
    expect(globMatches('**', '')).toBe(true);
    expect(globMatches('', '')).toBe(true);
    expect(globMatches('', 'a')).toBe(false);
  });

  it('stays linear on the near-misses that made the RegExp exponential', () => {
    const long = `${'a'.repeat(5_000)}b`;
    const probes = [
      '*a*a*a*a*a*a*a*a*a*a*a*a', // each extra *a multiplied the old time by about ten
      `*${'a*'.repeat(50)}c`,
      `${'a'.repeat(99)}*${'a'.repeat(98)}c`,
      `*${`${'a'.repeat(18)}c*`.repeat(9)}`,
    ];
    for (const p of probes) {
      const started = performance.now();
      globMatches(p, long);
      globMatches(p, 'ab'.repeat(2_500));
      expect(performance.now() - started).toBeLessThan(50);
    }
  });
});
