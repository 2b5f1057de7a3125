// The attempts of one person at one funnel, computed from the person's hits (events and revenue
// facts with the steps they fill): one attempt per entering event, each with the step it reached,
// the event that reached it and the times between steps. The read model stores them, so a read only
// picks each person's best attempt among those that entered in its window (README "Read model").
// An attempt depends only on the entering event and what follows it within the window, never on the
// period a read asks for, which is what makes storing it exact.
import type { StepOrder } from './definition';

/** Step bits 0..9 of a hit's mask. */
export const STEP_BITS = 1023;
/** Mask bit set when the hit passes the audience filter (it may enter the funnel). */
export const ENTRY_BIT = 1024;
/** Sort rank of a hit that fills no step: after every step at the same instant. */
export const NO_STEP_RANK = 15;

export interface Hit {
  /** Milliseconds since the epoch. */
  ts: number;
  /** Steps the hit fills (bits 0..9) and ENTRY_BIT. */
  mask: number;
  /** cityHash64 of the event (or revenue fact) id, as a decimal string: the last tie-break. */
  eid: string;
  /** Whether strict counts it as the person's next event (identify calls and revenue facts do not). */
  behavioural: boolean;
}

export interface Attempt {
  entry: Hit;
  /** The hit that filled the furthest step (the entry itself under any_order). */
  done: Hit;
  /** Steps reached, 1..steps. */
  reached: number;
  /** Milliseconds from each step to the next (reached - 1 values; none under any_order). */
  gaps: number[];
}

export function rankOf(mask: number): number {
  const steps = mask & STEP_BITS;
  return steps === 0 ? NO_STEP_RANK : 31 - Math.clz32(steps & -steps);
}

/** Numeric order of two non-negative decimal strings. */
function compareDecimal(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** A person's order of hits: time, then the lowest step filled, then the mask, then the id hash. */
export function compareHits(a: Hit, b: Hit): number {
  return a.ts - b.ts || rankOf(a.mask) - rankOf(b.mask) || a.mask - b.mask || compareDecimal(a.eid, b.eid);
}

/** The 15-bit tie of a hit within its millisecond, as stored: rank (4 bits) then mask (11 bits). */
export function tieOf(hit: Hit): number {
  return (rankOf(hit.mask) << 11) | (hit.mask & (STEP_BITS | ENTRY_BIT));
}

export interface AttemptOptions {
  order: StepOrder;
  steps: number;
  windowMs: number;
  /** Only attempts entering at or after this instant (ms)... */
  entryFrom: number;
  /** ...and at or before this one are returned. */
  entryTo: number;
}

const enters = (hit: Hit, o: AttemptOptions): boolean => (hit.mask & ENTRY_BIT) !== 0 && hit.ts >= o.entryFrom && hit.ts <= o.entryTo;

/**
 * The attempts entering inside [entryFrom, entryTo]. `hits` are the person's, sorted by
 * compareHits, and must hold every hit from entryFrom to entryTo + window.
 */
export function attemptsOf(hits: readonly Hit[], o: AttemptOptions): Attempt[] {
  if (o.order === 'any_order') return anyOrder(hits.filter((h) => (h.mask & STEP_BITS) !== 0), o);
  // strict reads the person's whole behavioural sequence (what lies between steps matters);
  // sequential only the hits that fill some step.
  const seq = o.order === 'strict' ? hits.filter((h) => h.behavioural) : hits.filter((h) => (h.mask & STEP_BITS) !== 0);
  return o.order === 'strict' ? strict(seq, o) : sequential(seq, o);
}

function sequential(seq: readonly Hit[], o: AttemptOptions): Attempt[] {
  const n = seq.length;
  // next[k][i]: the first hit after i that fills step k (-1: none).
  const next: Int32Array[] = [];
  for (let k = 1; k < o.steps; k += 1) {
    const row = new Int32Array(n);
    let seen = -1;
    for (let i = n - 1; i >= 0; i -= 1) {
      row[i] = seen;
      if (((seq[i] as Hit).mask >> k) & 1) seen = i;
    }
    next[k] = row;
  }
  const out: Attempt[] = [];
  for (let i = 0; i < n; i += 1) {
    const entry = seq[i] as Hit;
    if (!(entry.mask & 1) || !enters(entry, o)) continue;
    let at = i;
    const gaps: number[] = [];
    for (let k = 1; k < o.steps; k += 1) {
      const j = (next[k] as Int32Array)[at] as number;
      if (j < 0 || (seq[j] as Hit).ts - entry.ts > o.windowMs) break;
      gaps.push((seq[j] as Hit).ts - (seq[at] as Hit).ts);
      at = j;
    }
    out.push({ entry, done: seq[at] as Hit, reached: gaps.length + 1, gaps });
  }
  return out;
}

function strict(seq: readonly Hit[], o: AttemptOptions): Attempt[] {
  const out: Attempt[] = [];
  for (let i = 0; i < seq.length; i += 1) {
    const entry = seq[i] as Hit;
    if (!(entry.mask & 1) || !enters(entry, o)) continue;
    let at = i;
    const gaps: number[] = [];
    for (let k = 1; k < o.steps; k += 1) {
      const next = seq[at + 1];
      if (!next || !((next.mask >> k) & 1) || next.ts - entry.ts > o.windowMs) break;
      gaps.push(next.ts - (seq[at] as Hit).ts);
      at += 1;
    }
    out.push({ entry, done: seq[at] as Hit, reached: gaps.length + 1, gaps });
  }
  return out;
}

/**
 * any_order: an attempt opens at each instant of a hit that fills some step and may enter, and
 * holds the hits up to the window later; steps 0..r-1 are reached when different hits can fill
 * them (a maximum matching, grown one step at a time). Every entering hit of the instant gets the
 * instant's attempt.
 */
function anyOrder(seq: readonly Hit[], o: AttemptOptions): Attempt[] {
  const out: Attempt[] = [];
  const counts = new Map<number, number>();
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < seq.length;) {
    const s = (seq[i] as Hit).ts;
    let j = i;
    while (j < seq.length && (seq[j] as Hit).ts === s) j += 1;
    const starting = seq.slice(i, j).filter((h) => enters(h, o));
    if (starting.length > 0) {
      while (hi < seq.length && (seq[hi] as Hit).ts - s <= o.windowMs) {
        const m = (seq[hi] as Hit).mask & STEP_BITS;
        counts.set(m, (counts.get(m) ?? 0) + 1);
        hi += 1;
      }
      while (lo < i) {
        const m = (seq[lo] as Hit).mask & STEP_BITS;
        const c = (counts.get(m) as number) - 1;
        if (c === 0) counts.delete(m);
        else counts.set(m, c);
        lo += 1;
      }
      // An instant whose hits fill no prefix of the steps (only later steps) enters nobody.
      const reached = matchedPrefix(counts, o.steps);
      if (reached > 0) for (const entry of starting) out.push({ entry, done: entry, reached, gaps: [] });
    }
    i = j;
  }
  return out;
}

/** How many of steps 0, 1, ... can each take a different hit (hits grouped by mask, with counts). */
function matchedPrefix(counts: ReadonlyMap<number, number>, steps: number): number {
  const masks = [...counts.keys()];
  const capacity = masks.map((m) => counts.get(m) as number);
  const holders: number[][] = masks.map(() => []);
  const place = (step: number, seen: Set<number>): boolean => {
    for (let c = 0; c < masks.length; c += 1) {
      if (!(((masks[c] as number) >> step) & 1) || seen.has(c)) continue;
      seen.add(c);
      const held = holders[c] as number[];
      if (held.length < (capacity[c] as number)) {
        held.push(step);
        return true;
      }
      for (let h = 0; h < held.length; h += 1) {
        const other = held[h] as number;
        if (place(other, seen)) {
          held[h] = step;
          return true;
        }
      }
    }
    return false;
  };
  for (let k = 0; k < steps; k += 1) if (!place(k, new Set())) return k;
  return steps;
}
