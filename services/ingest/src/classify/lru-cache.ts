// A small approximate LRU cache in the "two generations" style (as in hashlru): entries live in a
// young map; when it fills, it becomes the old map and the previous old map is dropped whole. A hit
// in the old map is promoted. Every operation is O(1) and never iterates, unlike evicting from a Map
// by its insertion order, which degrades badly under churn. Holds between capacity/2 and capacity.
// Entries also age out: the young map is retired after half of `maxAgeMs` even when not full, and the
// old map is dropped once older than `maxAgeMs`, so nothing is held longer than that after its last use.
export const DEFAULT_MAX_AGE_MS = 10 * 60_000;

export class LruCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngSince: number;
  private oldSince: number;
  private readonly generation: number;

  constructor(capacity: number, private readonly maxAgeMs = DEFAULT_MAX_AGE_MS, private readonly now: () => number = Date.now) {
    if (!(capacity >= 2)) throw new RangeError('LruCache capacity must be at least 2');
    if (!(maxAgeMs > 0)) throw new RangeError('LruCache maxAgeMs must be positive');
    this.generation = Math.floor(capacity / 2);
    this.youngSince = this.oldSince = now();
  }

  /** Entries held (counted, so for metrics rather than hot paths). */
  get size(): number {
    this.age();
    let n = this.young.size;
    for (const key of this.old.keys()) if (!this.young.has(key)) n++;
    return n;
  }

  get(key: K): V | undefined {
    this.age();
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const aged = this.old.get(key);
    if (aged !== undefined) this.insert(key, aged);
    return aged;
  }

  set(key: K, value: V): void {
    this.age();
    if (this.young.has(key)) this.young.set(key, value);
    else this.insert(key, value);
  }

  private insert(key: K, value: V): void {
    this.young.set(key, value);
    if (this.young.size >= this.generation) this.retire(this.now());
  }

  private age(): void {
    const now = this.now();
    if (now - this.youngSince >= this.maxAgeMs / 2) this.retire(now);
    if (this.old.size > 0 && now - this.oldSince >= this.maxAgeMs) this.old = new Map();
  }

  private retire(now: number): void {
    this.old = this.young;
    this.oldSince = this.youngSince;
    this.young = new Map();
    this.youngSince = now;
  }
}
