// A small approximate LRU cache in the "two generations" style (as in hashlru): entries live in a
// young map; when it fills, it becomes the old map and the previous old map is dropped whole. A hit
// in the old map is promoted. Every operation is O(1) and never iterates, unlike evicting from a Map
// by its insertion order, which degrades badly under churn. Holds between capacity/2 and capacity.
export class LruCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly generation: number;

  constructor(capacity: number) {
    if (!(capacity >= 2)) throw new RangeError('LruCache capacity must be at least 2');
    this.generation = Math.floor(capacity / 2);
  }

  get size(): number {
    let n = this.young.size;
    for (const key of this.old.keys()) if (!this.young.has(key)) n++;
    return n;
  }

  get(key: K): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const aged = this.old.get(key);
    if (aged !== undefined) this.insert(key, aged);
    return aged;
  }

  set(key: K, value: V): void {
    if (this.young.has(key)) this.young.set(key, value);
    else this.insert(key, value);
  }

  private insert(key: K, value: V): void {
    this.young.set(key, value);
    if (this.young.size >= this.generation) {
      this.old = this.young;
      this.young = new Map();
    }
  }
}
