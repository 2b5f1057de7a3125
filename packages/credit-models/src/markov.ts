// Markov credit: a first-order chain over journeys' touch sequences, each channel credited by its
// removal effect. States are start, the channels, and two absorbing ends (conversion, null). A
// converting journey is start > c1 > ... > cn > conversion, a non-converting one ends in null; the
// transition probabilities are the observed transition counts, row-normalised. Repeated channels
// stay in the sequence: a self-loop delays absorption but never changes where it ends, so removal
// effects are the same with or without collapsing them.

/** Journeys that share a channel sequence, counted. */
export interface PathCount {
  path: readonly string[];
  conversions: number;
  /** Journeys with this sequence that did not convert. */
  nulls: number;
}

export interface MarkovResult {
  /** Each channel's share of the credit (sums to 1), by channel. */
  shares: Map<string, number>;
  /** Probability of reaching conversion from start, with every channel present. */
  conversionProbability: number;
  /** Each channel's removal effect: 1 - P(conversion without it) / P(conversion). */
  removalEffects: Map<string, number>;
}

/** The chain's two ends and its start, as state names no channel can have. */
export const START = '\u0000start';
export const CONVERSION = '\u0000conversion';
export const NULL_END = '\u0000null';

/** Journeys that moved from one state to the next (START, a channel; a channel, CONVERSION or NULL_END), counted. */
export interface Transition {
  from: string;
  to: string;
  count: number;
}

/** The transitions of journeys given as channel sequences. */
export function transitionsOf(paths: readonly PathCount[]): Transition[] {
  const out: Transition[] = [];
  for (const p of paths) {
    const journeys = p.conversions + p.nulls;
    if (journeys === 0 || p.path.length === 0) continue;
    const states = [START, ...p.path];
    for (let i = 1; i < states.length; i++) out.push({ from: states[i - 1] as string, to: states[i] as string, count: journeys });
    const last = p.path[p.path.length - 1] as string;
    if (p.conversions > 0) out.push({ from: last, to: CONVERSION, count: p.conversions });
    if (p.nulls > 0) out.push({ from: last, to: NULL_END, count: p.nulls });
  }
  return out;
}

/** Transition counts by state index: counts[from + 1][to], from -1 for start; to a channel index, k for conversion, k + 1 for null. */
interface Chain {
  channels: string[];
  counts: number[][];
}

function chainOf(transitions: readonly Transition[]): Chain {
  const ends = new Set([START, CONVERSION, NULL_END]);
  const channels = [...new Set(transitions.filter((t) => t.count > 0).flatMap((t) => [t.from, t.to]).filter((s) => !ends.has(s)))].sort();
  const index = new Map(channels.map((c, i) => [c, i]));
  const k = channels.length;
  const counts = Array.from({ length: k + 1 }, () => new Array<number>(k + 2).fill(0));
  for (const t of transitions) {
    if (t.count <= 0) continue;
    const from = t.from === START ? -1 : (index.get(t.from) as number);
    const to = t.to === CONVERSION ? k : t.to === NULL_END ? k + 1 : (index.get(t.to) as number);
    const row = counts[from + 1] as number[];
    row[to] = (row[to] as number) + t.count;
  }
  return { channels, counts };
}

/**
 * P(conversion) from start with the channel `removed` (index, or -1 for none) turned into a dead
 * end: x_i = p(i, conversion) + sum_j p(i, j) x_j over the channels, solved exactly by Gaussian
 * elimination (the chain has a few dozen states at most).
 */
function conversionFromStart(chain: Chain, removed: number): number {
  const k = chain.channels.length;
  const rowProbabilities = (row: number[]): number[] => {
    const total = row.reduce((a, b) => a + b, 0);
    return row.map((n) => (total === 0 ? 0 : n / total));
  };
  // A x = b with A = I - Q (removed channel: x = 0).
  const a = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  const b = new Array<number>(k).fill(0);
  for (let i = 0; i < k; i++) {
    (a[i] as number[])[i] = 1;
    if (i === removed) continue;
    const p = rowProbabilities(chain.counts[i + 1] as number[]);
    const row = a[i] as number[];
    for (let j = 0; j < k; j++) row[j] = (row[j] as number) - (p[j] as number);
    b[i] = p[k] as number;
  }
  const x = solve(a, b);
  const start = rowProbabilities(chain.counts[0] as number[]);
  let probability = 0;
  for (let j = 0; j < k; j++) if (j !== removed) probability += (start[j] as number) * (x[j] as number);
  return probability;
}

/** Solves A x = b (A square, non-singular) by Gaussian elimination with partial pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs((m[r] as number[])[col] as number) > Math.abs((m[pivot] as number[])[col] as number)) pivot = r;
    [m[col], m[pivot]] = [m[pivot] as number[], m[col] as number[]];
    const p = m[col] as number[];
    const diagonal = p[col] as number;
    if (diagonal === 0) continue;
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const row = m[r] as number[];
      const factor = (row[col] as number) / diagonal;
      if (factor === 0) continue;
      for (let c = col; c <= n; c++) row[c] = (row[c] as number) - factor * (p[c] as number);
    }
  }
  return m.map((row, i) => ((row[i] as number) === 0 ? 0 : (row[n] as number) / (row[i] as number)));
}

/** Markov credit shares from journeys' channel sequences, or null when no journey converts. */
export function markovShares(paths: readonly PathCount[]): MarkovResult | null {
  return markovFromTransitions(transitionsOf(paths));
}

/** Markov credit shares from transition counts, or null when no journey converts (there is nothing to remove from). */
export function markovFromTransitions(transitions: readonly Transition[]): MarkovResult | null {
  const chain = chainOf(transitions);
  const base = conversionFromStart(chain, -1);
  if (chain.channels.length === 0 || base <= 0) return null;
  const removalEffects = new Map<string, number>();
  chain.channels.forEach((c, i) => removalEffects.set(c, Math.max(0, 1 - conversionFromStart(chain, i) / base)));
  const sum = [...removalEffects.values()].reduce((a, b) => a + b, 0);
  if (sum <= 0) return null;
  return { shares: new Map([...removalEffects].map(([c, e]) => [c, e / sum])), conversionProbability: base, removalEffects };
}

/** A Markov result in words for meta.definitions: the outcome's probability and each channel's removal effect (4 decimals). */
export function describeRemovalEffects(result: MarkovResult, outcome: string): string {
  const round = (n: number): number => Math.round(n * 1e4) / 1e4;
  const effects = [...result.removalEffects].map(([c, e]) => `${c} ${round(e)}`).join(', ');
  return `P(${outcome}) = ${round(result.conversionProbability)}; removal effects: ${effects}.`;
}
