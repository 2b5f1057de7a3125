// People: names, email addresses and the imported CRM contact list. An email is derived from a
// person's index, so the same person always gets the same address and two people never share one.
import { EMAIL_DOMAINS, FIRST_NAMES, LAST_NAMES } from './model';
import { hash32, hashString, Rng, WeightedTable } from './random';
import type { ImportedContact, ResolvedOptions } from './types';

const DAY = 86_400_000;
const DOMAINS = new WeightedTable(EMAIL_DOMAINS);
const FREE_MAIL = new Set(['gmail.example', 'outlook.example', 'icloud.example', 'proton.example', 'yahoo.example']);

export interface Person { firstName: string; lastName: string; email: string; company: string | null }

/** Visitors and imported contacts use disjoint tags (v / c) so their addresses never collide by accident. */
export function makePerson(rng: Rng, tag: 'v' | 'c', index: number): Person {
  const firstName = rng.pick(FIRST_NAMES);
  const lastName = rng.pick(LAST_NAMES);
  const domain = DOMAINS.pick(rng);
  const style = rng.int(3);
  const local = style === 0 ? `${firstName}.${lastName}` : style === 1 ? `${firstName[0]}${lastName}` : `${firstName}${lastName[0]}`;
  const company = FREE_MAIL.has(domain) ? null : companyName(domain);
  return { firstName, lastName, email: `${local}.${tag}${index.toString(36)}@${domain}`, company };
}

function companyName(domain: string): string {
  const core = domain.replace('.example', '').split('-');
  return core.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

/** How many contacts the imported list holds for a workspace of this size. */
export function importedContactCount(visitors: number): number {
  return Math.max(3, Math.round(visitors * 0.012));
}

/** Share of imported contacts created before tracking began. */
const PREDATING_SHARE = 0.6;
const HISTORY_DAYS = 730;

/** The imported contact with this index; pure, so the simulation can look one up without the list. */
export function importedContact(opts: ResolvedOptions, index: number): ImportedContact {
  const rng = new Rng(hash32(opts.seed, hashString('contact'), index));
  const person = makePerson(rng, 'c', index);
  const count = importedContactCount(opts.visitors);
  const predating = Math.round(count * PREDATING_SHARE);
  // Created dates rise with the index, so the list comes out in time order.
  let created: number;
  if (index < predating) {
    const span = HISTORY_DAYS * DAY;
    created = opts.start - span + Math.floor(((index + rng.float()) / predating) * span);
  } else {
    const span = opts.end - opts.start;
    created = opts.start + Math.floor(((index - predating + rng.float()) / Math.max(1, count - predating)) * span);
  }
  return {
    email: person.email,
    first_name: cap(person.firstName),
    last_name: cap(person.lastName),
    company: person.company,
    created_at: new Date(created).toISOString(),
    predates_tracking: created < opts.start,
  };
}

export function* importedContacts(opts: ResolvedOptions): Generator<ImportedContact> {
  const count = importedContactCount(opts.visitors);
  for (let i = 0; i < count; i++) yield importedContact(opts, i);
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
