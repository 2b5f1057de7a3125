// Pipedrive, end to end: the Salesforce suite's checks at a smaller size. A stand-in company
// (services/crm-sync/test/pipedrive-server.ts: API v2 lists with cursors and updated_since, the v1
// deal changelog, x-api-token auth, burst rate-limit headers, person PATCH with custom fields) is
// generated with 1,000 deals over 400 persons and 100 organizations in one five-stage pipeline,
// about a third of the deals moved, some won or lost. Three dozen of its persons browse the site
// first (visits to /collect from paid search, organic search, email, referral, paid social, direct)
// and convert with their email (POST /v1/events); a deal of theirs moves Lead in → Contacted →
// Proposal after that, a third of them on to won. Pipedrive is connected through the admin API
// with an API token and a person write-back mapping onto two custom fields, and:
//   - a full sync mirrors every deal (/v1/deals: name, amount, currency, stage and bucket, a won
//     or lost deal in its pipeline's Won / Lost stage), organization (/v1/companies) and the
//     pipeline (/v1/pipelines: Pipedrive's stages in order, all open, then Won and Lost), reading
//     the changelog of exactly the deals that moved or closed;
//   - /v1/metrics?metrics=milestones&stages=proposal&group_by=channel equals the attribution
//     oracle's milestone credit (services/attribution/test/oracle/milestones.ts) under last_touch
//     (the default), first_touch and linear, computed from the company's deal changelogs and the
//     visits as sent;
//   - 20 edits in Pipedrive (8 deals moved, 4 won, 4 person emails, 4 organization names), then
//     an incremental sync, read with one request per list (pipelines, stages, organizations,
//     persons, deals) plus one changelog per changed deal, and show in the API, the mirror and the
//     milestones;
//   - PATCH /v1/contacts/{id} (status, sales value) lands on the person's custom fields in
//     Pipedrive with exactly one person PATCH.
// Written once, run on both driver profiles; the kill -9 of crm-sync while Pipedrive's answer to
// the write-back is held is in pipedrive.int.test.ts (helpers exported below).
import { randomUUID } from 'node:crypto';
import type { RunningProcess } from '@sightline/kit';
import { stageKey } from '@sightline/proto-schemas';
import { buildDataset, emailConversionsOf, milestoneCredit, type OracleEvent, type OracleMilestone, type RuleModel } from '../services/attribution/test/oracle';
import { FakePipedrive, seedGeneratedCompany, type LoggedRequest, type StoredDeal } from '../services/crm-sync/test/pipedrive-server';
import {
  DAY,
  HOUR,
  MINUTE,
  browseAndConvert,
  connectCrm,
  expectJourneys,
  findConversions,
  patchOutcome,
  rounded,
  sum,
  syncAndWait,
  waitFor,
  writebacksDone,
  type Browsed,
  type CrmAdmin,
  startCrmStack,
  type Json,
  type PublicApi,
} from './crm-e2e';
import type { DriverProfile } from './ingest.suite';
import type { Stack } from './stack';

export const PIPEDRIVE_SERVICES = ['gateway', 'ingest', 'attribution', 'contacts', 'crm-sync'];
/** The stage the milestone metrics are checked on. */
export const STAGE = 'Proposal';
/** The generated pipeline's stages (seedGeneratedCompany). */
const STAGE_NAMES = ['Lead in', 'Contacted', 'Demo', 'Proposal', 'Negotiation'];

/** The stand-in company with the two person custom fields the write-back maps onto. */
export interface PipedriveStandIn {
  fake: FakePipedrive;
  credentials: { api_token: string };
  fields: { status: string; sales_value: string };
  /** The connection settings: person write-back onto the two fields, stage history on. */
  settings: Json;
}

export async function startPipedriveStandIn(): Promise<PipedriveStandIn> {
  const fake = new FakePipedrive();
  await fake.start();
  const fields = { status: fake.addCustomField('person', 'Sightline status'), sales_value: fake.addCustomField('person', 'Sightline sales value') };
  return { fake, credentials: { api_token: fake.apiToken }, fields, settings: { writeback: { person: fields }, stage_history: true } };
}

/**
 * `deals` deals over 2/5 as many persons and 1/10 as many organizations, starting 6 days before
 * `t0` (a minute per change: it ends more than a day before anyone browses). Returns the pipeline's
 * stage ids by name.
 */
export function seedCompany(fake: FakePipedrive, deals: number, t0: number): { pipeline: number; stages: Record<string, number> } {
  const { pipeline, stages } = seedGeneratedCompany(fake, { deals, persons: Math.round(deals * 0.4), organizations: Math.round(deals / 10), seed: 26, start: new Date(t0 - 6 * DAY).toISOString() });
  expect(fake.stages.size).toBe(STAGE_NAMES.length);
  return { pipeline, stages: Object.fromEntries(stages.map((id) => [fake.stages.get(id)!.name, id])) };
}

// ───────────────────────────── browsing people ─────────────────────────────

/** One of the company's persons who browses, converts, and gets a deal afterwards. */
export interface Browser extends Browsed {
  personId: number;
  orgId: number | null;
  dealId: number;
}

/** The company's persons with an email, every `step`-th, `count` of them. */
export function pickPersons(fake: FakePipedrive, count: number, step = 11): { personId: number; orgId: number | null; email: string; dealId: number }[] {
  const withEmail = [...fake.persons.values()].filter((p) => p.emails.length > 0);
  const out: { personId: number; orgId: number | null; email: string; dealId: number }[] = [];
  for (let i = 0; out.length < count && i < withEmail.length; i += step) {
    const p = withEmail[i]!;
    out.push({ personId: p.id, orgId: p.org_id, email: p.emails[0]!.value, dealId: 0 });
  }
  return out;
}

/**
 * A deal for each browser with it as the person, created 2 days before t0 in Lead in, moved to
 * Contacted 6 hours later and to Proposal 16 hours after creation, a third of them won 30 hours
 * after creation: every stage after the person's visits and conversion. The clock is left frozen
 * an hour before t0.
 */
export function dealsAfterConversion(fake: FakePipedrive, stages: Record<string, number>, browsers: Browser[], t0: number): void {
  const at = (ms: number): void => fake.setNow(new Date(ms).toISOString());
  for (const [i, b] of browsers.entries()) {
    const created = t0 - 2 * DAY + i * MINUTE;
    at(created);
    b.dealId = fake.addDeal({ title: `Sightline deal ${i + 1}`, stage_id: stages['Lead in']!, value: 10_000 + i * 100, currency: 'USD', person_id: b.personId, org_id: b.orgId });
    at(created + 6 * HOUR);
    fake.updateDeal(b.dealId, { stage_id: stages['Contacted']! });
    at(created + 16 * HOUR);
    fake.updateDeal(b.dealId, { stage_id: stages[STAGE]! });
    if (i % 3 === 0) {
      at(created + 30 * HOUR);
      fake.updateDeal(b.dealId, { status: 'won' });
    }
  }
  at(t0 - HOUR);
}

/** Pipedrive keeps times to the second. */
const toSecond = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString();
const v1Instant = (time: string): string => new Date(`${time.replace(' ', 'T')}Z`).toISOString();

/**
 * The deal stage milestones the company's history implies, oldest first: each deal enters the
 * stage it was created in at its add time, then each stage it was moved to, and its pipeline's Won
 * or Lost stage when its status became won or lost, at the changelog's times. Id
 * pipedrive:deal:<id>:<stage key>, about the deal's person's primary email (lower-cased, as the
 * mirror keeps contacts' emails).
 */
export function stageMilestones(fake: FakePipedrive): OracleMilestone[] {
  const nameOf = (stageId: string | number): string => fake.stages.get(Number(stageId))!.name;
  const out: OracleMilestone[] = [];
  for (const d of fake.deals.values()) {
    if (d.status === 'deleted' || d.is_archived) continue;
    const person = d.person_id === null ? undefined : fake.persons.get(d.person_id);
    const email = person?.emails.find((e) => e.primary)?.value.toLowerCase() ?? null;
    const changes = fake.changelogOf(d.id);
    let stage = changes.find((c) => c.field_key === 'stage_id')?.old_value ?? String(d.stage_id);
    const entered = (name: string, at: string): void => {
      out.push({ id: `pipedrive:deal:${d.id}:${stageKey(name)}`, stage: stageKey(name), occurred_at: at, email });
    };
    entered(nameOf(stage), toSecond(d.add));
    for (const c of changes) {
      if (c.field_key === 'stage_id') {
        stage = c.new_value!;
        entered(nameOf(stage), v1Instant(c.time));
      } else if (c.field_key === 'status') {
        entered(c.new_value === 'won' ? 'Won' : c.new_value === 'lost' ? 'Lost' : nameOf(stage), v1Instant(c.time));
      }
    }
  }
  return out.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
}

/** The deals whose changelog a sync reads: moved stage or closed (won or lost). */
export const movedOrClosed = (d: StoredDeal): boolean => d.stage_change !== null || d.status === 'won' || d.status === 'lost';

/**
 * The stand-in's log from `from` on, Pipedrive API calls only (/api/...: on a shared machine a
 * stray client of some other test may reach the stand-in's port by a recycled port number).
 */
export const apiCalls = (requests: LoggedRequest[], from = 0): LoggedRequest[] => requests.slice(from).filter((r) => r.path.startsWith('/api/'));

/** API calls the stand-in logged from `from` on, counted by path (a deal's changelog path with `:id`), and the deal ids whose changelog was read. */
export function requestsByPath(requests: LoggedRequest[], from: number): { byPath: Record<string, number>; changelogs: number[]; total: number } {
  const byPath: Record<string, number> = {};
  const changelogs: number[] = [];
  const calls = apiCalls(requests, from);
  for (const r of calls) {
    const m = /^\/api\/v1\/deals\/(\d+)\/changelog$/.exec(r.path);
    if (m) changelogs.push(Number(m[1]));
    const path = m ? '/api/v1/deals/:id/changelog' : r.path;
    byPath[path] = (byPath[path] ?? 0) + 1;
  }
  return { byPath, changelogs: changelogs.sort((a, b) => a - b), total: calls.length };
}

/** Connects the company through the admin API with its API token; returns the connection id. */
export async function connectPipedrive(admin: CrmAdmin, website: { id: string; workspace_id: string }, standIn: PipedriveStandIn): Promise<string> {
  return connectCrm(admin, website, 'pipedrive', standIn.credentials, standIn.settings, standIn.credentials.api_token);
}

/** The stand-in's PATCHes of one person. */
export const personPatches = (fake: FakePipedrive, personId: number): LoggedRequest[] => fake.requests.filter((r) => r.method === 'PATCH' && r.path === `/api/v2/persons/${personId}`);

// ───────────────────────────── the suite ─────────────────────────────

export function describePipedrive(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`Pipedrive connector end to end (${profileName})`, () => {
    let profile: DriverProfile;
    let stack: Stack;
    let proc: RunningProcess;
    let standIn: PipedriveStandIn;
    let fake: FakePipedrive;
    let stages: Record<string, number>;
    let admin: CrmAdmin;
    let api: PublicApi;
    let base: string;
    let key: string;
    let publicId: string;
    let website: { id: string; workspace_id: string };
    let connectionId = '';
    let browsers: Browser[] = [];
    let oracleEvents: OracleEvent[] = [];
    let fullSyncRequests = 0;
    const t0 = Date.now();
    const window = { fromMs: t0 - 70 * DAY, toMs: t0 + DAY };

    const expectedCredit = (stage: string, model: RuleModel): Record<string, number> => {
      const d = buildDataset(oracleEvents);
      const credit = milestoneCredit({ milestones: stageMilestones(fake), sessions: d.sessions, conversions: emailConversionsOf(d), stages: [stage], model, window });
      return Object.fromEntries([...credit].map(([channel, n]) => [channel, Math.round(n * 1e9) / 1e9]));
    };
    /** Waits for attribution to hold as many `stage` milestones as the oracle, then compares per channel under last_touch (the default), first_touch and linear. */
    const expectMilestonesAsOracle = async (stage: string): Promise<void> => {
      const expected = expectedCredit(stage, 'last_touch');
      const total = sum(expected);
      const last = await waitFor(`all ${total} ${stage} milestones in attribution`, async () => {
        const r = await api.milestonesByChannel(stage, undefined, true);
        return r.status === 200 && sum(r.rows) === total ? r : undefined;
      }, 100_000).catch(async (error: Error) => {
        const r = await api.milestonesByChannel(stage, undefined, true);
        throw new Error(`${error.message}; attribution answers ${r.status} ${JSON.stringify(r.problem ?? r.rows)}, the oracle ${JSON.stringify(expected)}`);
      });
      expect(String((last.meta['definitions'] as Json)['stages'])).toContain(stage);
      expect(String((last.meta['definitions'] as Json)['attribution_model'])).toMatch(/^last_touch/);
      expect(rounded(last.rows)).toEqual(expected);
      for (const model of ['first_touch', 'linear'] as const) {
        const got = await api.milestonesByChannel(stage, model);
        expect({ model, rows: rounded(got.rows) }).toEqual({ model, rows: expectedCredit(stage, model) });
      }
    };
    /** Every deal as the company has it: [id, title, value, currency, stage name, bucket]. */
    const companyDeals = (): unknown[][] => [...fake.deals.values()]
      .filter((d) => d.status !== 'deleted' && !d.is_archived)
      .map((d) => [String(d.id), d.title, d.value, d.currency.toUpperCase(), d.status === 'won' ? 'Won' : d.status === 'lost' ? 'Lost' : fake.stages.get(d.stage_id)!.name, d.status === 'won' || d.status === 'lost' ? d.status : 'open'])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    const mirroredDeals = async (): Promise<unknown[][]> => (await api.all('/v1/deals'))
      .map((d) => [String(d['crm_id']), d['name'], d['amount'], d['currency'], (d['stage'] as Json)['name'], (d['stage'] as Json)['normalized_bucket']])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    const companyOrgs = (): string[][] => [...fake.organizations.values()].filter((o) => !o.is_deleted).map((o) => [String(o.id), o.name]).sort((a, b) => a[0]!.localeCompare(b[0]!));
    const mirroredOrgs = async (): Promise<string[][]> => (await api.all('/v1/companies')).map((c) => [String(c['crm_id']), String(c['name'])]).sort((a, b) => a[0]!.localeCompare(b[0]!));

    beforeAll(async () => {
      profile = await makeProfile();
      standIn = await startPipedriveStandIn();
      fake = standIn.fake;
      ({ stages } = seedCompany(fake, 1000, t0));
      ({ stack, proc, base, admin, publicId, website, key, api } = await startCrmStack(PIPEDRIVE_SERVICES, { ...profile.env, SIGHTLINE_PIPEDRIVE_URL: fake.url, SIGHTLINE_CREDENTIALS_KEY: 'pipedrive-e2e-credentials-key' }, 'Pipedrive', window));
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await fake?.close();
      await profile?.cleanup();
    }, 60_000);

    it('three dozen of the company\'s persons browse from distinct channels and convert before their deals move', async () => {
      expect({ deals: fake.deals.size, persons: fake.persons.size, organizations: fake.organizations.size }).toEqual({ deals: 1000, persons: 400, organizations: 100 });
      const picked = pickPersons(fake, 36);
      expect(new Set(picked.map((p) => p.personId)).size).toBe(36);
      ({ browsers, events: oracleEvents } = await browseAndConvert(base, publicId, key, picked, t0, 'pd'));
      await findConversions(base, key, browsers, t0);
      dealsAfterConversion(fake, stages, browsers, t0);
      // Attribution holds each person's sessions with the channels the oracle is given.
      await expectJourneys(api, browsers);
    }, 120_000);

    it('a full sync mirrors every deal, organization and the pipeline\'s stages (then Won and Lost) in order with their buckets', async () => {
      connectionId = await connectPipedrive(admin, website, standIn);
      const before = fake.requests.length;
      const done = await syncAndWait(admin, connectionId, true);
      expect(done).toMatchObject({ health: 'ok', last_error: null, paused_until: null });
      const full = requestsByPath(fake.requests, before);
      fullSyncRequests = full.total;
      // Every request carried the token in its header; the changelog of exactly the deals that moved or closed was read, once each.
      expect(apiCalls(fake.requests, before).filter((r) => r.auth !== 'api_token' || r.status !== 200)).toEqual([]);
      expect(full.changelogs).toEqual([...fake.deals.values()].filter(movedOrClosed).map((d) => d.id).sort((a, b) => a - b));

      expect(await api.totalOf('/v1/deals')).toBe(fake.deals.size);
      expect(await mirroredDeals()).toEqual(companyDeals());
      expect(await mirroredOrgs()).toEqual(companyOrgs());
      const pipelines = await api.get('/v1/pipelines');
      expect(pipelines.status).toBe(200);
      expect(pipelines.body.data.map((p) => [p['name'], p['provider']])).toEqual([...fake.pipelines.values()].map((p) => [p.name, 'pipedrive']));
      const stagesOfPipeline = [...fake.stages.values()].sort((a, b) => a.order_nr - b.order_nr);
      expect((pipelines.body.data[0]!['stages'] as Json[]).map((s) => [s['name'], s['normalized_bucket']])).toEqual([
        ...stagesOfPipeline.map((s) => [s.name, 'open']),
        ['Won', 'won'],
        ['Lost', 'lost'],
      ]);
      // A browser's deals: stage, amount and person (the conversion) as the company has them.
      const deals = await api.all('/v1/deals');
      const open = deals.find((d) => d['crm_id'] === String(browsers[1]!.dealId));
      expect(open).toMatchObject({ provider: 'pipedrive', name: 'Sightline deal 2', amount: 10_100, currency: 'USD', stage: { name: STAGE, normalized_bucket: 'open' }, crm_contact_ids: [String(browsers[1]!.personId)], contact_ids: [browsers[1]!.conversionId] });
      const won = deals.find((d) => d['crm_id'] === String(browsers[0]!.dealId));
      expect(won).toMatchObject({ name: 'Sightline deal 1', stage: { name: 'Won', normalized_bucket: 'won' }, contact_ids: [browsers[0]!.conversionId] });
    }, 150_000);

    it('milestones of a Pipedrive stage per channel equal the oracle under last_touch (default), first_touch and linear', async () => {
      const stage = stageKey(STAGE);
      // The oracle's own sanity: the browsers' deals reached the stage after their visits, so each is credited to a channel.
      const expected = expectedCredit(stage, 'last_touch');
      expect(sum(expected) - (expected['Unattributed'] ?? 0)).toBe(browsers.length);
      expect(expected['Unattributed'] ?? 0).toBeGreaterThan(50);
      await expectMilestonesAsOracle(stage);
    }, 120_000);

    it('an incremental sync reads 20 edits with one request per list plus one changelog per changed deal, and the API shows them', async () => {
      const browserDeals = new Set(browsers.map((b) => b.dealId));
      const browserPersons = new Set(browsers.map((b) => b.personId));
      const openDeals = [...fake.deals.values()].filter((d) => d.status === 'open' && !browserDeals.has(d.id));
      // Edits happen now (the sync reads what changed since the last one started, by update_time), a second apart.
      fake.setNow(new Date().toISOString());
      const tick = (): void => fake.advance(1000);
      // 8 deals from Demo on to Proposal, 4 untouched deals won, 4 person emails, 4 organization names: 20 edits.
      const moved = openDeals.filter((d) => d.stage_id === stages['Demo']).slice(0, 8).map((d) => d.id);
      const won = openDeals.filter((d) => d.stage_change === null).slice(0, 4).map((d) => d.id);
      expect({ moved: moved.length, won: won.length }).toEqual({ moved: 8, won: 4 });
      for (const id of moved) {
        tick();
        fake.updateDeal(id, { stage_id: stages[STAGE]! });
      }
      for (const id of won) {
        tick();
        fake.updateDeal(id, { status: 'won' });
      }
      const emailed = [...fake.persons.values()].filter((p) => !browserPersons.has(p.id)).slice(0, 4).map((p, i) => ({ id: p.id, email: `Moved.${i}.${randomUUID().slice(0, 6)}@Example.org` }));
      for (const p of emailed) {
        tick();
        fake.updatePerson(p.id, { emails: [{ value: p.email, primary: true, label: 'work' }] });
      }
      const renamed = [...fake.organizations.values()].slice(0, 4).map((o, i) => ({ id: o.id, name: `Renamed organization ${i}` }));
      for (const o of renamed) {
        tick();
        fake.updateOrganization(o.id, { name: o.name });
      }

      const before = fake.requests.length;
      const done = await syncAndWait(admin, connectionId);
      expect(done).toMatchObject({ health: 'ok', last_error: null });
      const incremental = requestsByPath(fake.requests, before);
      // Pipelines and stages in full (few), one page of each changed list, one changelog per changed deal: 17, whatever the company's size.
      expect(incremental.byPath).toEqual({
        '/api/v2/pipelines': 1,
        '/api/v2/stages': 1,
        '/api/v2/organizations': 1,
        '/api/v2/persons': 1,
        '/api/v2/deals': 1,
        '/api/v1/deals/:id/changelog': moved.length + won.length,
      });
      expect(incremental.changelogs).toEqual([...moved, ...won].sort((a, b) => a - b));
      expect(fullSyncRequests).toBeGreaterThan(10 * incremental.total);
      // Only changed records were asked for: every list of the incremental sync has a lower bound.
      for (const r of apiCalls(fake.requests, before).filter((x) => /^\/api\/v2\/(organizations|persons|deals)$/.test(x.path))) {
        expect({ path: r.path, updated_since: r.query['updated_since'], sort_by: r.query['sort_by'] }).toEqual({ path: r.path, updated_since: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/), sort_by: 'update_time' });
      }

      expect(await mirroredDeals()).toEqual(companyDeals());
      expect(await mirroredOrgs()).toEqual(companyOrgs());
      for (const o of renamed) expect(companyOrgs()).toContainEqual([String(o.id), o.name]);
      // Contacts are not on the public API with their emails: the mirror is read directly.
      const store = await proc.stores.sql('crm_sync');
      const mirrored = await store.query<{ crm_id: string; email: string | null }>('SELECT crm_id, email FROM crm_contacts WHERE website_id = $1', [website.id]);
      expect(mirrored.rows).toHaveLength(fake.persons.size);
      const emailBy = new Map(mirrored.rows.map((r) => [r.crm_id, r.email]));
      for (const p of emailed) expect({ id: p.id, email: emailBy.get(String(p.id)) }).toEqual({ id: p.id, email: p.email.toLowerCase() });
      // The moves into Proposal are milestones too: attribution still equals the oracle.
      await expectMilestonesAsOracle(stageKey(STAGE));
    }, 150_000);

    it('PATCH /v1/contacts/{id} writes the outcome onto the person\'s Pipedrive custom fields once', async () => {
      const b = browsers[0]!;
      expect(personPatches(fake, b.personId)).toHaveLength(0);
      await patchOutcome(base, key, b.conversionId, { status: 'won', sales_value: 4200 }, 'pd');
      const rows = await writebacksDone(admin, website.id, b.conversionId);
      expect(rows).toHaveLength(1);
      const { status, sales_value: salesValue } = standIn.fields;
      expect(fake.persons.get(b.personId)!.custom_fields).toMatchObject({ [status]: 'won', [salesValue]: 4200 });
      expect(personPatches(fake, b.personId).map((r) => r.body)).toEqual([{ custom_fields: { [status]: 'won', [salesValue]: 4200 } }]);
      // Another sync afterwards writes nothing more.
      await syncAndWait(admin, connectionId);
      await new Promise((r) => setTimeout(r, 1500));
      expect(personPatches(fake, b.personId)).toHaveLength(1);
      expect(apiCalls(fake.requests).filter((r) => r.method !== 'GET')).toHaveLength(1);
    }, 120_000);
  });
}
