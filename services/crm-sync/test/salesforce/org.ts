// The in-memory org (SalesforceOrg): tables, an explicit clock, cascade deletes, Opportunity
// history and API write validation, so tests control every record and timestamp.
import { SalesforceApiError, notFound } from './errors';
import { BASE62, KEY_PREFIX, idChecksum, normalizeId } from './ids';
import { SCHEMA_SOURCE, buildSchema, fieldOf, refreshTemplate, type Kind, type ObjectDef } from './schema';
import type { CustomFieldKind, FieldInput, SObjectName, SalesforceOrgOptions, SalesforceRecord } from './types';
import { coerce, outValue, toMs, type Row } from './values';

export interface Table {
  rows: Row[]; // insertion order; an update replaces the slot (copy-on-write keeps cursors stable)
  index: Map<string, number>;
}

export interface OpportunityStageInfo {
  ApiName: string;
  IsClosed: boolean;
  IsWon: boolean;
  DefaultProbability: number;
}

const DEFAULT_STAGES: [string, number, boolean, boolean][] = [
  ['Prospecting', 10, false, false],
  ['Qualification', 10, false, false],
  ['Needs Analysis', 20, false, false],
  ['Value Proposition', 50, false, false],
  ['Id. Decision Makers', 60, false, false],
  ['Perception Analysis', 70, false, false],
  ['Proposal/Price Quote', 75, false, false],
  ['Negotiation/Review', 90, false, false],
  ['Closed Won', 100, true, true],
  ['Closed Lost', 0, true, false],
];

interface WriteRule {
  type: SObjectName;
  id: string;
  field: string;
  message: string;
}

/** Children removed with their parent, as Salesforce's cascade delete does for these lookups. */
const CASCADE: Partial<Record<SObjectName, [SObjectName, string][]>> = {
  Account: [
    ['Contact', 'AccountId'],
    ['Opportunity', 'AccountId'],
  ],
  Opportunity: [
    ['OpportunityContactRole', 'OpportunityId'],
    ['OpportunityHistory', 'OpportunityId'],
  ],
  Contact: [['OpportunityContactRole', 'ContactId']],
};

export class SalesforceOrg {
  readonly orgId: string;
  readonly schema = buildSchema();
  private readonly tables = new Map<SObjectName, Table>();
  private readonly counters = new Map<SObjectName, number>();
  private readonly rules: WriteRule[] = [];
  private clock: () => Date;

  constructor(options: SalesforceOrgOptions = {}) {
    this.clock = options.now ?? (() => new Date());
    this.orgId = options.orgId ?? idChecksum('00D5e000000SgHt');
    for (const name of Object.keys(SCHEMA_SOURCE) as SObjectName[]) this.tables.set(name, { rows: [], index: new Map() });
    DEFAULT_STAGES.forEach(([api, prob, closed, won], i) =>
      this.insert('OpportunityStage', { ApiName: api, MasterLabel: api, SortOrder: i + 1, IsActive: true, IsClosed: closed, IsWon: won, DefaultProbability: prob }),
    );
  }

  now(): number {
    return this.clock().getTime();
  }

  setClock(now: () => Date): void {
    this.clock = now;
  }

  object(type: string): ObjectDef | undefined {
    return this.schema.get(type.toLowerCase());
  }

  private def(type: SObjectName): ObjectDef {
    const d = this.object(type);
    if (!d) throw new Error(`unknown sObject ${type}`);
    return d;
  }

  table(type: SObjectName): Table {
    return this.tables.get(type)!;
  }

  private newId(type: SObjectName): string {
    const n = (this.counters.get(type) ?? 0) + 1;
    this.counters.set(type, n);
    let body = '';
    for (let x = n, i = 0; i < 10; i++, x = Math.floor(x / 62)) body = BASE62[x % 62] + body;
    return idChecksum(`${KEY_PREFIX[type]}5e${body}`);
  }

  /** Adds a custom field (e.g. Sightline_Value__c) so queries and PATCHes may use it. */
  declareField(type: SObjectName, name: string, kind: CustomFieldKind, refTo?: SObjectName): void {
    const k: Kind = kind === 'number' ? 'double' : kind;
    const def = this.def(type);
    def.fields.set(name.toLowerCase(), { name, kind: k, updateable: true, ...(refTo ? { refTo } : {}) });
    refreshTemplate(def);
  }

  stage(apiName: string | null | undefined): OpportunityStageInfo | undefined {
    if (!apiName) return undefined;
    const t = this.table('OpportunityStage');
    const row = t.rows.find((r) => String(r['ApiName']).toLowerCase() === apiName.toLowerCase());
    return row ? { ApiName: row['ApiName'] as string, IsClosed: row['IsClosed'] as boolean, IsWon: row['IsWon'] as boolean, DefaultProbability: row['DefaultProbability'] as number } : undefined;
  }

  /** Creates a record (stamped `at`, default the clock) and returns its 18-character id. */
  insert(type: SObjectName, fields: Record<string, FieldInput>, at?: Date | string | number): string {
    const def = this.def(type);
    const t = at === undefined ? this.now() : toMs(at);
    const row: Row = { ...def.template };
    for (const k in fields) {
      const v = fields[k] as FieldInput;
      const f = fieldOf(def, k);
      if (!f) throw new Error(`No such column '${k}' on entity '${type}'`);
      row[f.name] = coerce(f, v);
    }
    const id = this.newId(type);
    row['Id'] = id;
    if ('CreatedDate' in row && row['CreatedDate'] === null) row['CreatedDate'] = t;
    if ('LastModifiedDate' in row) row['LastModifiedDate'] = t;
    if ('SystemModstamp' in row) row['SystemModstamp'] = t;
    if ('IsDeleted' in row) row['IsDeleted'] = false;
    if (type === 'Lead') {
      row['IsConverted'] ??= false;
      row['Status'] ??= 'Open - Not Contacted';
    }
    if (type === 'OpportunityContactRole') row['IsPrimary'] ??= false;
    if (type === 'Opportunity') this.deriveStage(row, fields['Probability'] === undefined);
    const table = this.table(type);
    table.index.set(id, table.rows.length);
    table.rows.push(row);
    if (type === 'Opportunity') this.writeHistory(row, t);
    return id;
  }

  /** Opportunity's IsClosed / IsWon follow the stage, and Probability defaults to the stage's. */
  private deriveStage(row: Row, probabilityFromStage: boolean): void {
    const stage = this.stage(row['StageName'] as string | null);
    row['IsClosed'] = stage?.IsClosed ?? false;
    row['IsWon'] = stage?.IsWon ?? false;
    if (probabilityFromStage && stage) row['Probability'] = stage.DefaultProbability;
  }

  private writeHistory(opp: Row, at: number): void {
    const id = this.newId('OpportunityHistory');
    const row: Row = { Id: id, OpportunityId: opp['Id']!, StageName: opp['StageName'] ?? null, Amount: opp['Amount'] ?? null, CloseDate: opp['CloseDate'] ?? null, CreatedDate: at, SystemModstamp: at, IsDeleted: false };
    const table = this.table('OpportunityHistory');
    table.index.set(id, table.rows.length);
    table.rows.push(row);
  }

  /** The raw row (internal form) or undefined. */
  row(type: SObjectName, id: string): Row | undefined {
    const t = this.table(type);
    const i = t.index.get(normalizeId(id));
    return i === undefined ? undefined : t.rows[i];
  }

  /** Finds a row by id in whichever object its key prefix names. */
  rowById(id: string): { type: SObjectName; row: Row } | undefined {
    const prefix = id.slice(0, 3);
    const type = (Object.keys(KEY_PREFIX) as SObjectName[]).find((k) => KEY_PREFIX[k] === prefix);
    if (!type) return undefined;
    const row = this.row(type, id);
    return row ? { type, row } : undefined;
  }

  /** Changes fields as a user save would (stamps LastModifiedDate/SystemModstamp; history for Opportunity). */
  update(type: SObjectName, id: string, fields: Record<string, FieldInput>, at?: Date | string | number): void {
    const def = this.def(type);
    const table = this.table(type);
    const i = table.index.get(normalizeId(id));
    if (i === undefined) throw new Error(`no ${type} ${id}`);
    const old = table.rows[i]!;
    const row: Row = { ...old };
    for (const k in fields) {
      const v = fields[k] as FieldInput;
      const f = fieldOf(def, k);
      if (!f) throw new Error(`No such column '${k}' on entity '${type}'`);
      row[f.name] = coerce(f, v);
    }
    const t = at === undefined ? this.now() : toMs(at);
    if ('LastModifiedDate' in row) row['LastModifiedDate'] = t;
    if ('SystemModstamp' in row) row['SystemModstamp'] = t;
    if (type === 'Opportunity') {
      const probGiven = Object.keys(fields).some((k) => k.toLowerCase() === 'probability');
      if (row['StageName'] !== old['StageName'] || !probGiven) this.deriveStage(row, row['StageName'] !== old['StageName'] && !probGiven);
    }
    table.rows[i] = row;
    if (type === 'Opportunity' && (row['StageName'] !== old['StageName'] || row['Amount'] !== old['Amount'] || row['CloseDate'] !== old['CloseDate'])) this.writeHistory(row, t);
  }

  /** Soft delete (to the recycle bin): IsDeleted, visible to queryAll and Get Deleted; cascades like Salesforce. */
  remove(type: SObjectName, id: string, at?: Date | string | number): void {
    const table = this.table(type);
    const i = table.index.get(normalizeId(id));
    if (i === undefined) throw new Error(`no ${type} ${id}`);
    const old = table.rows[i]!;
    if (old['IsDeleted']) return;
    const t = at === undefined ? this.now() : toMs(at);
    table.rows[i] = { ...old, IsDeleted: true, SystemModstamp: t };
    for (const [child, field] of CASCADE[type] ?? []) {
      for (const r of this.table(child).rows) if (r[field] === old['Id'] && !r['IsDeleted']) this.remove(child, r['Id'] as string, t);
    }
  }

  /** A record in Salesforce's JSON form, or undefined. Deleted records are returned (IsDeleted true). */
  get(type: SObjectName, id: string): SalesforceRecord | undefined {
    const row = this.row(type, id);
    return row ? this.present(type, row) : undefined;
  }

  all(type: SObjectName, options: { includeDeleted?: boolean } = {}): SalesforceRecord[] {
    return this.table(type)
      .rows.filter((r) => options.includeDeleted || !r['IsDeleted'])
      .map((r) => this.present(type, r));
  }

  private present(type: SObjectName, row: Row): SalesforceRecord {
    const def = this.def(type);
    const out: SalesforceRecord = {};
    for (const f of def.fields.values()) out[f.name] = outValue(f, row[f.name]);
    return out;
  }

  /** A validation rule: a write to `field` of this record fails with FIELD_CUSTOM_VALIDATION_EXCEPTION. */
  rejectWrite(type: SObjectName, id: string, field: string, message: string): void {
    this.rules.push({ type, id: normalizeId(id), field, message });
  }

  clearRules(): void {
    this.rules.length = 0;
  }

  /**
   * Validates and applies an API write (sObject Rows PATCH / Collections). Throws SalesforceApiError
   * with the status and code Salesforce documents; `dryRun` validates only.
   */
  apiUpdate(typeName: string, id: string, body: unknown, dryRun = false): void {
    const def = this.object(typeName);
    if (!def) throw notFound();
    const row = this.row(def.name, id);
    if (!row || row['IsDeleted'] === true) throw new SalesforceApiError(404, 'NOT_FOUND', 'The requested resource does not exist');
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'Cannot deserialize instance of sObject from non-object value');
    const changes: Record<string, FieldInput> = {};
    const readOnly: string[] = [];
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
      if (k === 'attributes') continue;
      const f = def.fields.get(k.toLowerCase());
      if (!f) throw new SalesforceApiError(400, 'INVALID_FIELD', `No such column '${k}' on sobject of type ${def.name}`);
      if (f.name === 'Id' && typeof v === 'string' && normalizeId(v) === row['Id']) continue; // echoing the id is allowed
      if (!f.updateable) {
        readOnly.push(f.name);
        continue;
      }
      try {
        coerce(f, v);
      } catch (e) {
        throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', (e as Error).message);
      }
      changes[f.name] = v as FieldInput;
    }
    if (readOnly.length)
      throw new SalesforceApiError(400, 'INVALID_FIELD_FOR_INSERT_UPDATE', `Unable to create/update fields: ${readOnly.join(', ')}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`, readOnly);
    for (const rule of this.rules) {
      if (rule.type !== def.name || rule.id !== row['Id']) continue;
      if (Object.keys(changes).some((k) => k.toLowerCase() === rule.field.toLowerCase())) throw new SalesforceApiError(400, 'FIELD_CUSTOM_VALIDATION_EXCEPTION', rule.message, [rule.field]);
    }
    if (!dryRun) this.update(def.name, row['Id'] as string, changes);
  }
}
