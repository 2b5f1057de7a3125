// Shapley credit: channels are players; a coalition S is worth the conversions (and, as a second
// payoff, the revenue) of the converting journeys whose set of channels lies within S, i.e. what S
// alone would have produced. Each channel gets its Shapley value: its marginal worth averaged over
// every order in which the channels could join. The credits sum to the worth of all channels, the
// converting journeys' conversions and revenue.
//
// Up to SHAPLEY_EXACT_MAX_CHANNELS channels every coalition is enumerated (2^k of them, exact).
// Past it the value is estimated from random orderings: in an ordering a channel's marginal worth
// is the payoff of the journeys it completes (those whose channels have all arrived once it does),
// a number between 0 and R_c, the payoff of all journeys containing c. By Hoeffding's inequality
// and a union bound over the k channels, with probability at least 95% every estimate is within
// R_c * sqrt(ln(2k / 0.05) / (2M)) of the exact value after M orderings. The orderings come from a
// fixed-seed generator, so the same data gives the same answer.
import { SHAPLEY_EXACT_MAX_CHANNELS, SHAPLEY_SAMPLED_PERMUTATIONS } from '@sightline/proto-schemas';

/** Converting journeys that share a set of channels, with their payoff. */
export interface ChannelSetPayoff {
  channels: readonly string[];
  conversions: number;
  value: number;
}

export interface ShapleyCredit {
  conversions: number;
  value: number;
}

export interface ShapleyResult {
  credits: Map<string, ShapleyCredit>;
  exact: boolean;
  /** Sampled only: orderings drawn, and each channel's bound on the conversions error (95%, all channels at once). */
  permutations?: number;
  errorBounds?: Map<string, number>;
}

export interface ShapleyOptions {
  exactMaxChannels?: number;
  permutations?: number;
}

/** The confidence the sampled bound holds with, for every channel at once. */
export const SAMPLED_CONFIDENCE = 0.95;

export function shapleyCredits(sets: readonly ChannelSetPayoff[], options: ShapleyOptions = {}): ShapleyResult | null {
  const channels = [...new Set(sets.flatMap((s) => s.channels))].sort();
  if (channels.length === 0) return null;
  const index = new Map(channels.map((c, i) => [c, i]));
  // Payoff of each distinct channel set, as a bit mask of channel indices.
  const byMask = new Map<number, { conversions: number; value: number; members: number[] }>();
  for (const s of sets) {
    if (s.channels.length === 0) continue;
    const members = [...new Set(s.channels.map((c) => index.get(c) as number))].sort((a, b) => a - b);
    const key = members.reduce((mask, i) => mask + 2 ** i, 0);
    const seen = byMask.get(key) ?? { conversions: 0, value: 0, members };
    seen.conversions += s.conversions;
    seen.value += s.value;
    byMask.set(key, seen);
  }
  const exactMax = options.exactMaxChannels ?? SHAPLEY_EXACT_MAX_CHANNELS;
  return channels.length <= exactMax ? exact(channels, byMask) : sampled(channels, [...byMask.values()], options.permutations ?? SHAPLEY_SAMPLED_PERMUTATIONS);
}

function exact(channels: string[], byMask: Map<number, { conversions: number; value: number }>): ShapleyResult {
  const k = channels.length;
  const size = 1 << k;
  // Worth of every coalition: the sum over the sets within it (a subset-sum transform).
  const conv = new Float64Array(size);
  const val = new Float64Array(size);
  for (const [mask, p] of byMask) {
    conv[mask] = (conv[mask] as number) + p.conversions;
    val[mask] = (val[mask] as number) + p.value;
  }
  for (let bit = 0; bit < k; bit++) {
    for (let mask = 0; mask < size; mask++) {
      if (mask & (1 << bit)) {
        conv[mask] = (conv[mask] as number) + (conv[mask ^ (1 << bit)] as number);
        val[mask] = (val[mask] as number) + (val[mask ^ (1 << bit)] as number);
      }
    }
  }
  // Weight of a coalition of s channels joined by one more: s! (k - s - 1)! / k!.
  const factorial = [1];
  for (let i = 1; i <= k; i++) factorial.push((factorial[i - 1] as number) * i);
  const weight = Array.from({ length: k }, (_, s) => ((factorial[s] as number) * (factorial[k - s - 1] as number)) / (factorial[k] as number));
  const popcount = (n: number): number => { let c = 0; for (let x = n; x; x &= x - 1) c++; return c; };
  const credits = new Map<string, ShapleyCredit>();
  channels.forEach((channel, c) => {
    const bit = 1 << c;
    let conversions = 0;
    let value = 0;
    for (let mask = 0; mask < size; mask++) {
      if (mask & bit) continue;
      const w = weight[popcount(mask)] as number;
      conversions += w * ((conv[mask | bit] as number) - (conv[mask] as number));
      value += w * ((val[mask | bit] as number) - (val[mask] as number));
    }
    credits.set(channel, { conversions, value });
  });
  return { credits, exact: true };
}

/** mulberry32: a small seeded generator (reproducible orderings, not cryptographic). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sampled(channels: string[], sets: readonly { conversions: number; value: number; members: number[] }[], permutations: number): ShapleyResult {
  const k = channels.length;
  const random = generator(0x5eed);
  const conv = new Float64Array(k);
  const val = new Float64Array(k);
  const order = Array.from({ length: k }, (_, i) => i);
  const position = new Int32Array(k);
  for (let m = 0; m < permutations; m++) {
    for (let i = k - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    order.forEach((c, p) => { position[c] = p; });
    // A journey set's payoff is added by the last of its channels to arrive.
    for (const s of sets) {
      let last = s.members[0] as number;
      for (const c of s.members) if ((position[c] as number) > (position[last] as number)) last = c;
      conv[last] = (conv[last] as number) + s.conversions;
      val[last] = (val[last] as number) + s.value;
    }
  }
  const reach = new Float64Array(k);
  for (const s of sets) for (const c of s.members) reach[c] = (reach[c] as number) + s.conversions;
  const spread = Math.sqrt(Math.log((2 * k) / (1 - SAMPLED_CONFIDENCE)) / (2 * permutations));
  const credits = new Map<string, ShapleyCredit>();
  const errorBounds = new Map<string, number>();
  channels.forEach((channel, c) => {
    credits.set(channel, { conversions: (conv[c] as number) / permutations, value: (val[c] as number) / permutations });
    errorBounds.set(channel, (reach[c] as number) * spread);
  });
  return { credits, exact: false, permutations, errorBounds };
}

/** The names of a game's two payoffs, as an answer calls them (conversions and revenue; entered and completed). */
export interface PayoffNames {
  first: string;
  second: string;
}

/**
 * How exact a Shapley result is, in a sentence for meta.definitions: every coalition enumerated,
 * or the orderings sampled with each channel's bound on the first payoff (the second is within the
 * same fraction of its own total over the journeys containing the channel).
 */
export function describeShapleyAccuracy(result: ShapleyResult, names: PayoffNames): string {
  const k = result.credits.size;
  const channels = `${k} channel${k === 1 ? '' : 's'}`;
  if (result.exact) return `Exact: all ${2 ** k} coalitions of the ${channels} enumerated (exact up to ${SHAPLEY_EXACT_MAX_CHANNELS} channels).`;
  const bounds = [...(result.errorBounds ?? new Map<string, number>())].map(([c, b]) => `${c} ±${Math.round(b * 1e4) / 1e4}`).join(', ');
  return `Not exact: ${k} channels is more than ${SHAPLEY_EXACT_MAX_CHANNELS}, so the values are the mean marginal worth over ${result.permutations} random channel orderings (fixed seed). With ${SAMPLED_CONFIDENCE * 100}% confidence for all channels at once, each channel's ${names.first} are within: ${bounds} (Hoeffding bound: ${names.first} of the journeys containing the channel × sqrt(ln(2k/0.05) / (2 × orderings))); its ${names.second} within the same fraction of the ${names.second} of those journeys.`;
}
