// The data-driven models restated from their documented rules, computed differently from src/ on
// purpose, for the services' differential tests:
// - markov: the conversion probability is found by iterating x <- b + Q x until it settles (src/
//   solves the linear system exactly);
// - shapley: Zhao et al.'s closed form for this game (arXiv 1804.05327, "simplified Shapley value"):
//   a coalition's worth is the sum of the payoffs of the journey sets it contains, so it is a sum of
//   unanimity games and each channel's value is the sum, over the journeys whose channels include
//   it, of the journey's payoff / its number of distinct channels (src/ enumerates coalitions, or
//   samples orderings).

/** One journey: its channels oldest first, and whether it ended in the outcome. */
export interface OracleSequence {
  channels: readonly string[];
  converted: boolean;
}

/** P(outcome) from start in the chain of the sequences' transitions, with `removed` a dead end. */
function conversionProbability(sequences: readonly OracleSequence[], removed: string | null): number {
  const out = new Map<string, Map<string, number>>();
  const count = (from: string, to: string) => {
    const row = out.get(from) ?? new Map<string, number>();
    row.set(to, (row.get(to) ?? 0) + 1);
    out.set(from, row);
  };
  for (const s of sequences) {
    const states = ['(start)', ...s.channels, s.converted ? '(conversion)' : '(null)'];
    for (let i = 0; i + 1 < states.length; i++) count(states[i] as string, states[i + 1] as string);
  }
  let x = new Map<string, number>();
  for (let round = 0; round < 100_000; round++) {
    const next = new Map<string, number>();
    let change = 0;
    for (const [from, row] of out) {
      if (from === removed) { next.set(from, 0); continue; }
      const total = [...row.values()].reduce((a, b) => a + b, 0);
      let p = 0;
      for (const [to, n] of row) p += (n / total) * (to === '(conversion)' ? 1 : to === '(null)' || to === removed ? 0 : x.get(to) ?? 0);
      next.set(from, p);
      change = Math.max(change, Math.abs(p - (x.get(from) ?? 0)));
    }
    x = next;
    if (change < 1e-15 && round > 0) break;
  }
  return x.get('(start)') ?? 0;
}

/**
 * Each channel's share of the credit (summing to 1): its removal effect 1 - P(without it) / P,
 * normalised. Null when no sequence with a channel converts.
 */
export function oracleMarkovShares(sequences: readonly OracleSequence[]): Map<string, number> | null {
  const touched = sequences.filter((s) => s.channels.length > 0);
  if (!touched.some((s) => s.converted)) return null;
  const base = conversionProbability(touched, null);
  if (base <= 0) return null;
  const channels = [...new Set(touched.flatMap((s) => s.channels))];
  const effects = new Map(channels.map((c) => [c, Math.max(0, 1 - conversionProbability(touched, c) / base)]));
  const sum = [...effects.values()].reduce((a, b) => a + b, 0);
  return sum > 0 ? new Map([...effects].map(([c, e]) => [c, e / sum])) : null;
}

/** Each channel's Shapley value of a payoff carried by journeys (by the closed form); empty without a journey with a channel. */
export function oracleShapley(journeys: readonly { channels: readonly string[]; payoff: number }[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const j of journeys) {
    const set = [...new Set(j.channels)];
    for (const c of set) out.set(c, (out.get(c) ?? 0) + j.payoff / set.length);
  }
  return out;
}
