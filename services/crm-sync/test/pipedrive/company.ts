// The in-memory company (pipelines, stages, organizations, persons, deals, custom field keys and
// each deal's changelog) and the clock the test freezes and moves. The base of FakePipedrive, so
// tests seed and change data through the same object that serves it.
import { createHash } from 'node:crypto';
import { v1Time } from './json';
import { HttpError, USER_ID, type Change, type DealInput, type DealPatch, type FakePipedriveOptions, type StoredDeal, type StoredOrg, type StoredPerson, type StoredPipeline, type StoredStage } from './types';

export class PipedriveCompany {
  readonly pipelines = new Map<number, StoredPipeline>();
  readonly stages = new Map<number, StoredStage>();
  readonly organizations = new Map<number, StoredOrg>();
  readonly persons = new Map<number, StoredPerson>();
  readonly deals = new Map<number, StoredDeal>();
  protected readonly changes = new Map<number, Change[]>();
  protected readonly personFields = new Set<string>();
  protected readonly dealFields = new Set<string>();
  private nextId = 1;
  private frozen: number | null;

  constructor(options: FakePipedriveOptions) {
    this.frozen = options.now ? Date.parse(options.now) : null;
  }

  // ---- clock ----

  now(): number {
    return this.frozen ?? Date.now();
  }

  /** Freezes the clock at an instant (ISO 8601). */
  setNow(iso: string): void {
    this.frozen = Date.parse(iso);
  }

  /** Moves a frozen clock on (freezing it at the real time first if it was not). */
  advance(ms: number): void {
    this.frozen = (this.frozen ?? Date.now()) + ms;
  }

  // ---- the company's data ----

  /** A custom field key as Pipedrive makes them: 40 hex characters. */
  addCustomField(entity: 'person' | 'deal', name: string): string {
    const key = createHash('sha1').update(`${entity}:${name}`).digest('hex');
    (entity === 'person' ? this.personFields : this.dealFields).add(key);
    return key;
  }

  addPipeline(name: string, stageNames: string[]): { id: number; stages: number[] } {
    const at = this.now();
    const id = this.nextId++;
    this.pipelines.set(id, { id, name, order_nr: this.pipelines.size + 1, is_deleted: false, is_deal_probability_enabled: false, add: at, update: at });
    const stages = stageNames.map((stageName, i) => {
      const stageId = this.nextId++;
      this.stages.set(stageId, { id: stageId, name: stageName, order_nr: i + 1, pipeline_id: id, deal_probability: 100, is_deleted: false, add: at, update: at });
      return stageId;
    });
    return { id, stages };
  }

  addOrganization(name: string): number {
    const at = this.now();
    const id = this.nextId++;
    this.organizations.set(id, { id, name, owner_id: USER_ID, is_deleted: false, add: at, update: at, custom_fields: {} });
    return id;
  }

  addPerson(name: string, emails: string[], orgId: number | null = null): number {
    const at = this.now();
    const id = this.nextId++;
    this.persons.set(id, { id, name, owner_id: USER_ID, org_id: orgId, emails: emails.map((value, i) => ({ value, primary: i === 0, label: i === 0 ? 'work' : 'home' })), is_deleted: false, add: at, update: at, custom_fields: this.blankFields(this.personFields) });
    return id;
  }

  updatePerson(id: number, patch: Partial<Pick<StoredPerson, 'name' | 'org_id' | 'emails'>>): void {
    const p = this.mustGet(this.persons, id, 'Person');
    Object.assign(p, patch, { update: this.now() });
  }

  deletePerson(id: number): void {
    Object.assign(this.mustGet(this.persons, id, 'Person'), { is_deleted: true, update: this.now() });
  }

  updateOrganization(id: number, patch: Partial<Pick<StoredOrg, 'name'>>): void {
    Object.assign(this.mustGet(this.organizations, id, 'Organization'), patch, { update: this.now() });
  }

  addDeal(input: DealInput): number {
    const stage = this.mustGet(this.stages, input.stage_id, 'Stage');
    const at = this.now();
    const id = this.nextId++;
    const status = input.status ?? 'open';
    this.deals.set(id, {
      id, title: input.title, owner_id: USER_ID, person_id: input.person_id ?? null, org_id: input.org_id ?? null,
      pipeline_id: stage.pipeline_id, stage_id: stage.id, value: input.value ?? 0, currency: input.currency ?? 'EUR', status,
      add: at, update: at, stage_change: null, won: status === 'won' ? at : null, lost: status === 'lost' ? at : null,
      close: status === 'won' || status === 'lost' ? at : null, is_archived: false, custom_fields: { ...this.blankFields(this.dealFields), ...(input.custom_fields ?? {}) },
    });
    this.changes.set(id, []);
    return id;
  }

  /** Changes a deal as a user would; stage, pipeline and status changes land in its changelog. */
  updateDeal(id: number, patch: DealPatch, source = 'app'): void {
    const d = this.mustGet(this.deals, id, 'Deal');
    const at = this.now();
    const log = this.changes.get(id)!;
    const note = (field: string, before: unknown, after: unknown): void => {
      if (before === after) return;
      log.push({ field_key: field, old_value: before === null ? null : String(before), new_value: after === null ? null : String(after), at, source });
    };
    if (patch.stage_id !== undefined && patch.stage_id !== d.stage_id) {
      const stage = this.mustGet(this.stages, patch.stage_id, 'Stage');
      note('pipeline_id', d.pipeline_id, stage.pipeline_id);
      note('stage_id', d.stage_id, stage.id);
      d.pipeline_id = stage.pipeline_id;
      d.stage_id = stage.id;
      d.stage_change = at;
    }
    if (patch.status !== undefined && patch.status !== d.status) {
      note('status', d.status, patch.status);
      d.status = patch.status;
      d.won = patch.status === 'won' ? at : patch.status === 'open' ? null : d.won;
      d.lost = patch.status === 'lost' ? at : patch.status === 'open' ? null : d.lost;
      d.close = patch.status === 'won' || patch.status === 'lost' ? at : patch.status === 'open' ? null : d.close;
    }
    for (const key of ['title', 'value', 'currency', 'person_id', 'org_id'] as const) {
      if (patch[key] === undefined) continue;
      note(key, d[key], patch[key]);
      (d as unknown as Record<string, unknown>)[key] = patch[key];
    }
    if (patch.custom_fields) Object.assign(d.custom_fields, patch.custom_fields);
    d.update = at;
  }

  /** The deal's recorded changes, oldest first (the API answers newest first). */
  changelogOf(id: number): { field_key: string; old_value: string | null; new_value: string | null; time: string }[] {
    return (this.changes.get(id) ?? []).map((c) => ({ field_key: c.field_key, old_value: c.old_value, new_value: c.new_value, time: v1Time(c.at) }));
  }

  protected visibleDeal(id: number): StoredDeal {
    const d = this.deals.get(id);
    if (!d || d.status === 'deleted') throw new HttpError(404, 'Deal not found');
    return d;
  }

  protected visiblePerson(id: number): StoredPerson {
    const p = this.persons.get(id);
    if (!p || p.is_deleted) throw new HttpError(404, 'Person not found');
    return p;
  }

  private blankFields(keys: Set<string>): Record<string, unknown> {
    return Object.fromEntries([...keys].map((k) => [k, null]));
  }

  private mustGet<T>(map: Map<number, T>, id: number, what: string): T {
    const item = map.get(id);
    if (!item) throw new Error(`${what} ${id} does not exist in the fake company`);
    return item;
  }
}
