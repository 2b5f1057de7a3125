// Seeded randomness. Everything the generator draws comes from here, so one seed and one set of
// options always give byte-identical output (Math.random is never used).

/** Mixes any number of 32-bit integers into one well-spread 32-bit value (murmur3 finaliser style). */
export function hash32(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
    h = Math.imul(h, 0x297a2d39);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

/** Stable 32-bit hash of a string (FNV-1a), for deriving sub-seeds from labels. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const HEX_CODES = Buffer.from('0123456789abcdef', 'latin1');
const UUID_BUF = Buffer.alloc(36, 0x2d); // pre-filled with '-'
/** Buffer offsets of the 32 hex digits of a uuid, skipping its four dashes. */
const UUID_POS = Uint8Array.from([...Array(36).keys()].filter((i) => i !== 8 && i !== 13 && i !== 18 && i !== 23));

function writeHex(word: number, digit: number): void {
  for (let shift = 28; shift >= 0; shift -= 4) UUID_BUF[UUID_POS[digit++]!] = HEX_CODES[(word >>> shift) & 15]!;
}
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** xoshiro128** seeded through splitmix32: fast, small state, good enough statistics for synthetic data. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | null = null;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** Uniform unsigned 32-bit integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [min, max], both inclusive. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** Standard normal through Box-Muller; the second value is kept for the next call. */
  normal(mean = 0, sd = 1): number {
    if (this.spareNormal !== null) {
      const z = this.spareNormal;
      this.spareNormal = null;
      return mean + sd * z;
    }
    let u = this.float();
    while (u === 0) u = this.float();
    const v = this.float();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return mean + sd * r * Math.cos(2 * Math.PI * v);
  }

  /** Lognormal given its median and the sigma of the underlying normal. */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** Poisson count; Knuth's method for small means, a rounded normal for large ones. */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 50) return Math.max(0, Math.round(this.normal(mean, Math.sqrt(mean))));
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.float();
    while (p > limit) {
      k++;
      p *= this.float();
    }
    return k;
  }

  /** Number of failures before the first success, with the given mean. */
  geometric(mean: number): number {
    if (mean <= 0) return 0;
    const p = 1 / (1 + mean);
    let u = this.float();
    while (u === 0) u = this.float();
    return Math.floor(Math.log(u) / Math.log(1 - p));
  }

  /** RFC 4122 version-4 layout, but drawn from this generator so ids are reproducible. */
  uuid(): string {
    // Written into one scratch buffer and read out as a single flat string: ids are made for every
    // event, and string concatenation here was the generator's largest cost.
    writeHex(this.u32(), 0);
    const b = this.u32();
    writeHex(((b & 0xffff0fff) | 0x4000) >>> 0, 8);
    const c = this.u32();
    writeHex(((c & 0x3fffffff) | 0x80000000) >>> 0, 16);
    writeHex(this.u32(), 24);
    return UUID_BUF.toString('latin1', 0, 36);
  }

  /** Random [A-Za-z0-9] token, the shape of ad click ids. */
  token(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += ALNUM[this.int(ALNUM.length)];
    return out;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** Precomputed cumulative weights; pick is a binary search. */
export class WeightedTable<T> {
  readonly values: readonly T[];
  private readonly cumulative: Float64Array;
  private readonly total: number;

  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    const kept = entries.filter(([, w]) => w > 0);
    if (kept.length === 0) throw new Error('weighted table needs at least one positive weight');
    this.values = kept.map(([v]) => v);
    this.cumulative = new Float64Array(kept.length);
    let sum = 0;
    kept.forEach(([, w], i) => {
      sum += w;
      this.cumulative[i] = sum;
    });
    this.total = sum;
  }

  static of<T extends { weight: number }>(items: readonly T[]): WeightedTable<T> {
    return new WeightedTable(items.map((item) => [item, item.weight] as const));
  }

  pick(rng: Rng): T {
    const target = rng.float() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! > target) hi = mid;
      else lo = mid + 1;
    }
    return this.values[lo] as T;
  }

  /** Probability of the value at an index, for expected-value calculations. */
  share(index: number): number {
    const prev = index === 0 ? 0 : this.cumulative[index - 1]!;
    return (this.cumulative[index]! - prev) / this.total;
  }
}

/** Splits an integer total across weights exactly (largest remainder), so counts always add up. */
export function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((s, w) => s + w, 0);
  if (sum <= 0) return weights.map(() => 0);
  const raw = weights.map((w) => (total * w) / sum);
  const counts = raw.map(Math.floor);
  let left = total - counts.reduce((s, c) => s + c, 0);
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((x, y) => y[0] - x[0] || x[1] - y[1]);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) counts[order[k]![1]]! += 1;
  return counts;
}
