// People: anonymous ids, normalised emails and phones that ever appear on one event are one person
// (union-find). The result does not depend on event order, so neither does the oracle.
import type { OracleEvent } from './types';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Digits with a leading + kept: enough for the E.164 inputs the tests send. */
export function normalisePhone(phone: string): string {
  const trimmed = phone.trim();
  return (trimmed.startsWith('+') ? '+' : '') + trimmed.replace(/\D/g, '');
}

export function identityKeysOf(e: Pick<OracleEvent, 'anonymous_id' | 'email' | 'phone'>): string[] {
  const keys: string[] = [];
  if (e.anonymous_id) keys.push(`anon:${e.anonymous_id}`);
  if (e.email && e.email.trim() !== '') keys.push(`email:${normaliseEmail(e.email)}`);
  if (e.phone && normalisePhone(e.phone) !== '') keys.push(`phone:${normalisePhone(e.phone)}`);
  return keys;
}

export class People {
  private readonly parent = new Map<string, string>();

  constructor(events: readonly OracleEvent[]) {
    for (const e of events) {
      const keys = identityKeysOf(e);
      for (const k of keys) this.add(k);
      for (let i = 1; i < keys.length; i += 1) this.union(keys[0] as string, keys[i] as string);
    }
  }

  /** The person of an event: its keys' group, or a person of its own when it carries no key. */
  personOf(e: OracleEvent): string {
    const first = identityKeysOf(e)[0];
    return first ? this.find(first) : `event:${e.event_id}`;
  }

  personOfAnonymousId(anonymousId: string): string {
    return this.find(`anon:${anonymousId}`);
  }

  private add(key: string): void {
    if (!this.parent.has(key)) this.parent.set(key, key);
  }

  private find(key: string): string {
    let root = key;
    while (this.parent.get(root) !== root) root = this.parent.get(root) as string;
    let node = key;
    while (node !== root) {
      const next = this.parent.get(node) as string;
      this.parent.set(node, root);
      node = next;
    }
    return root;
  }

  private union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    // Smaller key wins, so the representative is stable whatever the event order.
    if (ra !== rb) ra < rb ? this.parent.set(rb, ra) : this.parent.set(ra, rb);
  }
}
