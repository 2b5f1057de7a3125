// People: union-find over the keys that name a person. From ingest's published events the keys are
// anonymous id, normalised email and phone on one event; from generated journeys they are identity
// ids joined by merge edges. The order in which links arrive does not matter.

export class People {
  private readonly parent = new Map<string, string>();

  private find(key: string): string {
    let root = key;
    while (this.parent.has(root) && this.parent.get(root) !== root) root = this.parent.get(root) as string;
    let at = key;
    while (this.parent.has(at) && this.parent.get(at) !== root) {
      const next = this.parent.get(at) as string;
      this.parent.set(at, root);
      at = next;
    }
    return root;
  }

  /** Registers keys that name the same person. */
  link(keys: readonly string[]): void {
    const present = keys.filter((k) => k !== '');
    for (const k of present) if (!this.parent.has(k)) this.parent.set(k, k);
    for (let i = 1; i < present.length; i += 1) {
      const a = this.find(present[0] as string);
      const b = this.find(present[i] as string);
      if (a !== b) this.parent.set(b < a ? a : b, b < a ? b : a);
    }
  }

  has(key: string): boolean {
    return this.parent.has(key);
  }

  /** A stable label of the person a key belongs to. */
  personOf(key: string): string {
    return this.find(key);
  }
}
