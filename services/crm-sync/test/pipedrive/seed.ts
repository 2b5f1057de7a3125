// Seeds for tests: a small hand-made company with a known history, and a generated company of any
// size from a seeded random source (same seed, same data).
import { Rng } from '@sightline/datagen';
import type { FakePipedrive } from './server';

export interface ExampleCompany {
  pipelines: { sales: number; renewals: number };
  stages: { qualified: number; demo: number; proposal: number; negotiation: number; renewalDue: number; renewalSigned: number };
  orgs: { acme: number; globex: number; initech: number };
  persons: { ada: number; bob: number; cy: number; dee: number; eve: number };
  deals: { expansion: number; pilot: number; lostDeal: number; renewal: number };
  fields: { personSalesValue: string; personStatus: string; dealSalesValue: string };
}

/**
 * A small company with a known history, clock frozen and moved by the hour so every change has
 * its own time: two pipelines, three organizations, five persons, four deals (one moved twice
 * then won, one lost, one still open, one never moved).
 */
export function seedExampleCompany(fake: FakePipedrive, start = '2026-03-01T09:00:00Z'): ExampleCompany {
  fake.setNow(start);
  const fields = {
    personSalesValue: fake.addCustomField('person', 'Sightline sales value'),
    personStatus: fake.addCustomField('person', 'Sightline status'),
    dealSalesValue: fake.addCustomField('deal', 'Sightline sales value'),
  };
  const sales = fake.addPipeline('Sales', ['Qualified', 'Demo', 'Proposal', 'Negotiation']);
  const renewals = fake.addPipeline('Renewals', ['Renewal due', 'Renewal signed']);
  const [qualified, demo, proposal, negotiation] = sales.stages as [number, number, number, number];
  const [renewalDue, renewalSigned] = renewals.stages as [number, number];
  const acme = fake.addOrganization('Acme GmbH');
  const globex = fake.addOrganization('Globex Ltd');
  const initech = fake.addOrganization('Initech');
  const ada = fake.addPerson('Ada Lovelace', ['Ada@Acme.example', 'ada.home@example.net'], acme);
  const bob = fake.addPerson('Bob Builder', ['bob@acme.example'], acme);
  const cy = fake.addPerson('Cy Young', ['cy@globex.example'], globex);
  const dee = fake.addPerson('Dee Dee', ['dee@initech.example'], initech);
  const eve = fake.addPerson('Eve Solo', [], null);
  fake.advance(3_600_000);
  const expansion = fake.addDeal({ title: 'Acme expansion', stage_id: qualified, value: 12000, currency: 'EUR', person_id: ada, org_id: acme });
  const pilot = fake.addDeal({ title: 'Globex pilot', stage_id: qualified, value: 5000, currency: 'usd', person_id: cy, org_id: globex });
  const lostDeal = fake.addDeal({ title: 'Initech rollout', stage_id: demo, value: 8000, currency: 'EUR', person_id: dee, org_id: initech });
  const renewal = fake.addDeal({ title: 'Acme renewal', stage_id: renewalDue, value: 3000, currency: 'EUR', person_id: bob, org_id: acme });
  fake.advance(3_600_000);
  fake.updateDeal(expansion, { stage_id: demo });
  fake.updateDeal(pilot, { stage_id: proposal });
  fake.advance(3_600_000);
  fake.updateDeal(expansion, { stage_id: proposal });
  fake.updateDeal(lostDeal, { status: 'lost' });
  fake.advance(3_600_000);
  fake.updateDeal(pilot, { status: 'won' });
  fake.advance(3_600_000);
  return {
    pipelines: { sales: sales.id, renewals: renewals.id },
    stages: { qualified, demo, proposal, negotiation, renewalDue, renewalSigned },
    orgs: { acme, globex, initech },
    persons: { ada, bob, cy, dee, eve },
    deals: { expansion, pilot, lostDeal, renewal },
    fields,
  };
}

/** Deterministic draws (datagen's seeded generator): the same seed gives the same company. */
export function seededRandom(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.float();
}

/**
 * A generated company: `deals` deals over `persons` persons and `organizations` organizations in
 * one five-stage pipeline; about a third of the deals move one to three stages, then some are won
 * or lost. The clock moves a minute per change. Same seed, same data.
 */
export function seedGeneratedCompany(fake: FakePipedrive, sizes: { deals: number; persons?: number; organizations?: number; seed?: number; start?: string }): { pipeline: number; stages: number[]; dealIds: number[] } {
  const random = seededRandom(sizes.seed ?? 42);
  fake.setNow(sizes.start ?? '2026-01-05T08:00:00Z');
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const { id: pipeline, stages } = fake.addPipeline('Generated', ['Lead in', 'Contacted', 'Demo', 'Proposal', 'Negotiation']);
  const orgs = Array.from({ length: sizes.organizations ?? Math.max(1, Math.ceil(sizes.deals / 20)) }, (_, i) => fake.addOrganization(`Company ${i + 1}`));
  const people = Array.from({ length: sizes.persons ?? Math.max(1, Math.ceil(sizes.deals / 5)) }, (_, i) => fake.addPerson(`Person ${i + 1}`, [`person${i + 1}@example.com`], pick(orgs)));
  const dealIds: number[] = [];
  for (let i = 0; i < sizes.deals; i++) {
    fake.advance(60_000);
    const person = pick(people);
    dealIds.push(fake.addDeal({ title: `Deal ${i + 1}`, stage_id: stages[0]!, value: Math.round(random() * 50_000), currency: pick(['EUR', 'USD', 'GBP']), person_id: person, org_id: fake.persons.get(person)!.org_id }));
  }
  for (const id of dealIds) {
    if (random() > 1 / 3) continue;
    const moves = 1 + Math.floor(random() * 3);
    for (let m = 1; m <= moves; m++) {
      fake.advance(60_000);
      fake.updateDeal(id, { stage_id: stages[m]! });
    }
    const r = random();
    if (r < 0.3) {
      fake.advance(60_000);
      fake.updateDeal(id, { status: r < 0.15 ? 'won' : 'lost' });
    }
  }
  fake.advance(60_000);
  return { pipeline, stages, dealIds };
}
