// Deterministic org seeding for tests and the bench: the same seed always builds the same org.
import { Rng } from '@sightline/datagen';
import type { SalesforceOrg } from './org';

/** Deterministic draws (datagen's seeded generator) so a seed always builds the same org. */
function prng(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.float();
}

export interface SeedOptions {
  leads?: number;
  contacts?: number;
  accounts?: number;
  opportunities?: number;
  seed?: number;
  /** Records are created between `end - days` and `end` (default: org clock, 180 days). */
  end?: Date;
  days?: number;
}

export interface SeedResult {
  accounts: string[];
  contacts: string[];
  leads: string[];
  opportunities: string[];
}

const FIRST = ['Ada', 'Bram', 'Chiara', 'Dev', 'Elif', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Kaia', 'Luca', 'Mira', 'Noor', 'Otto', 'Priya'];
const LAST = ['Amsel', 'Borg', 'Castell', 'Dahl', 'Eng', 'Falk', 'Gomez', 'Hale', 'Ivers', 'Jansen', 'Kovac', 'Lind', 'Moreau', 'Nakamura', 'Okafor', 'Petrov'];
const SOURCES = ['Web', 'Phone Inquiry', 'Partner Referral', 'Purchased List', 'Other', null];
const INDUSTRIES = ['Technology', 'Manufacturing', 'Retail', 'Finance', 'Healthcare', null];
const LEAD_STATUS = ['Open - Not Contacted', 'Working - Contacted', 'Closed - Not Converted'];
const OPEN_STAGES = ['Prospecting', 'Qualification', 'Needs Analysis', 'Value Proposition', 'Id. Decision Makers', 'Perception Analysis', 'Proposal/Price Quote', 'Negotiation/Review'];

/**
 * Fills an org deterministically: accounts, contacts on them, leads (some converted into a
 * contact/account/opportunity), opportunities that walk through stages (each move writes
 * OpportunityHistory as Salesforce does) with contact roles. Timestamps are spread over `days`.
 */
export function seedOrg(org: SalesforceOrg, options: SeedOptions = {}): SeedResult {
  const rnd = prng(options.seed ?? 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const end = (options.end ?? new Date(org.now())).getTime();
  const span = (options.days ?? 180) * 86400_000;
  const startT = end - span;
  const when = (from = startT): number => from + Math.floor(rnd() * Math.max(1, end - from));
  const out: SeedResult = { accounts: [], contacts: [], leads: [], opportunities: [] };
  const accountContacts = new Map<string, string[]>();

  for (let i = 0; i < (options.accounts ?? 0); i++) {
    const id = org.insert('Account', { Name: `Account ${i + 1} ${pick(LAST)}`, Website: `https://acct${i + 1}.example.com`, Industry: pick(INDUSTRIES) }, when());
    out.accounts.push(id);
    accountContacts.set(id, []);
  }
  for (let i = 0; i < (options.contacts ?? 0); i++) {
    const acct = out.accounts.length ? pick(out.accounts) : null;
    const first = pick(FIRST);
    const last = pick(LAST);
    const id = org.insert('Contact', { FirstName: first, LastName: last, Email: `${first}.${last}.c${i + 1}@example.com`.toLowerCase(), AccountId: acct, LeadSource: pick(SOURCES) }, when());
    out.contacts.push(id);
    if (acct) accountContacts.get(acct)!.push(id);
  }
  for (let i = 0; i < (options.opportunities ?? 0); i++) {
    const acct = out.accounts.length ? pick(out.accounts) : null;
    let t = when();
    const amount = Math.round(1000 + rnd() * 99000);
    const close = new Date(t + Math.floor(rnd() * 90) * 86400_000).toISOString().slice(0, 10);
    const id = org.insert('Opportunity', { Name: `Deal ${i + 1}`, Amount: amount, CurrencyIsoCode: 'USD', StageName: 'Prospecting', CloseDate: close, AccountId: acct }, t);
    out.opportunities.push(id);
    // Walk forward through 0–4 stage moves, each a later save (and an OpportunityHistory row).
    const moves = Math.floor(rnd() * 5);
    let stageIdx = 0;
    for (let m = 0; m < moves && t < end; m++) {
      t = t + Math.floor(rnd() * Math.max(1, (end - t) / 2));
      const finish = m === moves - 1 && rnd() < 0.5;
      const stage = finish ? (rnd() < 0.5 ? 'Closed Won' : 'Closed Lost') : OPEN_STAGES[Math.min(OPEN_STAGES.length - 1, (stageIdx += 1 + Math.floor(rnd() * 2)))]!;
      org.update('Opportunity', id, { StageName: stage, ...(rnd() < 0.3 ? { Amount: Math.round(amount * (0.8 + rnd() * 0.4)) } : {}) }, t);
      if (finish) break;
    }
    const contacts = acct ? accountContacts.get(acct)! : [];
    if (contacts.length) org.insert('OpportunityContactRole', { OpportunityId: id, ContactId: pick(contacts), Role: 'Decision Maker', IsPrimary: true }, when(startT));
  }
  for (let i = 0; i < (options.leads ?? 0); i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const t = when();
    const converted = out.contacts.length > 0 && rnd() < 0.1;
    const contact = converted ? pick(out.contacts) : null;
    const acct = contact ? ((org.row('Contact', contact)?.['AccountId'] as string | null) ?? null) : null;
    const opp = converted && out.opportunities.length && rnd() < 0.5 ? pick(out.opportunities) : null;
    const id = org.insert(
      'Lead',
      {
        FirstName: first,
        LastName: last,
        Email: `${first}.${last}.l${i + 1}@example.com`.toLowerCase(),
        Company: `Company ${1 + Math.floor(rnd() * 500)}`,
        Status: converted ? 'Closed - Converted' : pick(LEAD_STATUS),
        LeadSource: pick(SOURCES),
        ...(converted ? { IsConverted: true, ConvertedContactId: contact, ConvertedAccountId: acct, ConvertedOpportunityId: opp } : {}),
      },
      t,
    );
    out.leads.push(id);
  }
  return out;
}
