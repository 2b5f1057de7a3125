// A local Salesforce for tests: one node:http server playing both the login host
// (/services/oauth2/token: JWT bearer and refresh-token grants) and the org's instance
// (/services/data/vNN.0/...: query / queryMore / queryAll, sObject Get Deleted, sObject Rows
// PATCH, sObject Collections PATCH, limits, Bulk API 2.0 query jobs), answering in the shapes the
// REST API Developer Guide and Bulk API 2.0 guide document: error bodies are arrays of
// {message, errorCode[, fields]}, every data answer carries Sforce-Limit-Info, and each data call
// counts against a daily allocation until REQUEST_LIMIT_EXCEEDED. The org is held in memory
// (SalesforceOrg) with Salesforce-style 18-character ids and an explicit clock, so the connector
// under test cannot tell it from a real org and the test controls every timestamp.
//
// SOQL is parsed by a small tokenizer + recursive-descent parser (a subset: SELECT fields /
// relationship paths / COUNT(), FROM, WHERE with AND/OR/NOT/parentheses, comparison, IN, NOT IN,
// LIKE, ORDER BY, LIMIT, OFFSET). Filters compile to closures once per query and run in one pass
// over the object's rows; a query's matched rows become a cursor, so later pages are slices.
import { createHmac, createSign, createVerify, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Rng } from '@sightline/datagen';

// ───────────────────────────── public types ─────────────────────────────

export type SObjectName =
  | 'Lead'
  | 'Contact'
  | 'Account'
  | 'Opportunity'
  | 'OpportunityContactRole'
  | 'OpportunityHistory'
  | 'OpportunityStage'
  | 'RecordType';

/** Kinds a test may give a custom field (declareField / options.customFields). */
export type CustomFieldKind = 'string' | 'textarea' | 'email' | 'url' | 'picklist' | 'boolean' | 'double' | 'number' | 'currency' | 'percent' | 'int' | 'date' | 'datetime' | 'reference';

/** A value as a test passes it in: datetimes may be Date, ISO string or epoch ms; dates 'YYYY-MM-DD'. */
export type FieldInput = string | number | boolean | Date | null;

/** A record as the org hands it back to tests: datetimes as Salesforce's JSON form (…000+0000). */
export type SalesforceRecord = Record<string, string | number | boolean | null>;

export interface SalesforceOrgOptions {
  /** The org clock; every write without an explicit `at` is stamped with it. */
  now?: () => Date;
  /** 18-character org id (00D…), used in token ids and access tokens. */
  orgId?: string;
}

export interface SalesforceReply {
  status: number;
  /** JSON-encoded unless a string (sent as is). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface SalesforceCall {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  /** A label for counting by endpoint: token, query, queryMore, queryAll, getDeleted, patchRecord, collectionsUpdate, limits, bulkCreate, bulkStatus, bulkResults, versions, unknown. */
  endpoint: string;
  /** Org clock at arrival (ms). */
  at: number;
}

export interface RefreshTokenGrant {
  token: string;
  clientId: string;
  username: string;
}

export interface SalesforceServerOptions {
  /** Public key (PEM, SPKI or certificate) of the connected app's certificate; JWT grants fail without it. */
  jwtPublicKeyPem?: string;
  /** Consumer keys (the JWT `iss`, the refresh grant's client_id) the org knows. */
  clientIds?: string[];
  /** Consumer secrets by client id; when set, a refresh grant naming a different secret fails. */
  clientSecrets?: Record<string, string>;
  /** Usernames pre-authorized for the app (the JWT `sub`). */
  usernames?: string[];
  /** The JWT audience the org expects (login URL); defaults to this server's URL. */
  loginUrl?: string;
  /** A token accepted on data calls without a grant. */
  staticToken?: string;
  /** Refresh tokens the org has issued. */
  refreshTokens?: RefreshTokenGrant[];
  /** Daily API request allocation (Sforce-Limit-Info's max); Salesforce's Enterprise base is 15,000 (plus per-licence). */
  dailyAllocation?: number;
  /** Query batch size; Salesforce's default (and max) is 2,000. */
  batchSize?: number;
  /** GET jobs/query/<id> answers InProgress this many times before JobComplete. */
  bulkPollsBeforeDone?: number;
  /** Access-token lifetime (Salesforce's session timeout); default 2 hours. */
  sessionSeconds?: number;
  /** How far back sObject Get Deleted may start; default 30 days (see README for the documented 15-day note). */
  deletedRetentionDays?: number;
  /** Query cursors idle longer than this answer INVALID_QUERY_LOCATOR; default 15 minutes. */
  cursorIdleSeconds?: number;
  /** The clock (also the org's unless `org` is given). */
  now?: () => Date;
  /** Use this org instead of a fresh empty one. */
  org?: SalesforceOrg;
  customFields?: { type: SObjectName; name: string; kind: CustomFieldKind }[];
}

export interface SalesforceServer {
  url: string;
  org: SalesforceOrg;
  calls: SalesforceCall[];
  /** API usage as Sforce-Limit-Info reports it. */
  usage(): { used: number; max: number };
  /** Starts a new 24-hour period (used = 0), optionally with a new allocation. */
  resetAllocation(max?: number): void;
  /** The next requests (any endpoint) get these answers instead, in order; 'reset' drops the connection. */
  failNext(...answers: (SalesforceReply | 'reset')[]): void;
  revokeToken(token: string): void;
  revokeRefreshToken(token: string): void;
  /** A valid access token for tests (as if a JWT grant had happened for the first username). */
  issueToken(username?: string): string;
  /** Access tokens this server issued that are still live (not revoked, not expired). */
  issuedTokens(): string[];
  /** Registers a refresh token (as if the web-server flow had issued one); returns it. */
  issueRefreshToken(clientId?: string, username?: string): string;
  close(): Promise<void>;
}

// ───────────────────────────── errors ─────────────────────────────

/** A Salesforce error answer: status plus the documented array body. */
export class SalesforceApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly fields?: string[],
  ) {
    super(message);
  }
  body(): unknown {
    return [{ message: this.message, errorCode: this.errorCode, ...(this.fields ? { fields: this.fields } : {}) }];
  }
}

const notFound = (): SalesforceApiError => new SalesforceApiError(404, 'NOT_FOUND', 'The requested resource does not exist');

// ───────────────────────────── ids ─────────────────────────────

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SUFFIX_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';

/** Salesforce's 15→18 suffix: one char per 5-char chunk, bit i set when char i is upper case. */
export function idChecksum(id15: string): string {
  let out = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15.charCodeAt(chunk * 5 + i);
      if (c >= 65 && c <= 90) bits |= 1 << i;
    }
    out += SUFFIX_CHARS[bits];
  }
  return id15 + out;
}

function normalizeId(id: string): string {
  return id.length === 15 ? idChecksum(id) : id;
}

export const KEY_PREFIX: Record<SObjectName, string> = {
  Lead: '00Q',
  Contact: '003',
  Account: '001',
  Opportunity: '006',
  OpportunityContactRole: '00K',
  OpportunityHistory: '008',
  OpportunityStage: '01J',
  RecordType: '012',
};

// ───────────────────────────── schema ─────────────────────────────

type Kind = 'id' | 'reference' | 'string' | 'textarea' | 'email' | 'url' | 'picklist' | 'boolean' | 'double' | 'currency' | 'percent' | 'int' | 'date' | 'datetime';

interface FieldDef {
  name: string;
  kind: Kind;
  updateable: boolean;
  refTo?: SObjectName;
}

interface ObjectDef {
  name: SObjectName;
  fields: Map<string, FieldDef>; // by lower-case name
  relationships: Map<string, { name: string; field: string; refTo: SObjectName }>; // by lower-case relationship name
  /** Written only by Salesforce itself (history, setup objects): PATCH answers as for a read-only object. */
  readOnly: boolean;
  /** Exact-case lookup first (the common case), and a null-filled row every insert copies (one hidden class). */
  byName: Map<string, FieldDef>;
  template: Row;
}

const SYSTEM: [string, Kind][] = [
  ['Id', 'id'],
  ['CreatedDate', 'datetime'],
  ['LastModifiedDate', 'datetime'],
  ['SystemModstamp', 'datetime'],
  ['IsDeleted', 'boolean'],
];
const READONLY_FIELDS = new Set(['Id', 'CreatedDate', 'LastModifiedDate', 'SystemModstamp', 'IsDeleted', 'IsConverted', 'ConvertedContactId', 'ConvertedAccountId', 'ConvertedOpportunityId', 'IsClosed', 'IsWon']);

const SCHEMA_SOURCE: Record<SObjectName, { fields: [string, Kind, SObjectName?][]; readOnly?: boolean; noLastModified?: boolean }> = {
  Lead: {
    fields: [
      ['FirstName', 'string'],
      ['LastName', 'string'],
      ['Email', 'email'],
      ['Company', 'string'],
      ['Status', 'picklist'],
      ['LeadSource', 'picklist'],
      ['IsConverted', 'boolean'],
      ['ConvertedContactId', 'reference', 'Contact'],
      ['ConvertedAccountId', 'reference', 'Account'],
      ['ConvertedOpportunityId', 'reference', 'Opportunity'],
    ],
  },
  Contact: {
    fields: [
      ['FirstName', 'string'],
      ['LastName', 'string'],
      ['Email', 'email'],
      ['AccountId', 'reference', 'Account'],
      ['LeadSource', 'picklist'],
    ],
  },
  Account: { fields: [['Name', 'string'], ['Website', 'url'], ['Industry', 'picklist']] },
  Opportunity: {
    fields: [
      ['Name', 'string'],
      ['Amount', 'currency'],
      ['CurrencyIsoCode', 'picklist'],
      ['StageName', 'picklist'],
      ['IsClosed', 'boolean'],
      ['IsWon', 'boolean'],
      ['CloseDate', 'date'],
      ['AccountId', 'reference', 'Account'],
      ['RecordTypeId', 'reference', 'RecordType'],
      ['Probability', 'percent'],
    ],
  },
  OpportunityContactRole: {
    fields: [
      ['OpportunityId', 'reference', 'Opportunity'],
      ['ContactId', 'reference', 'Contact'],
      ['Role', 'picklist'],
      ['IsPrimary', 'boolean'],
    ],
    noLastModified: true,
  },
  OpportunityHistory: {
    fields: [
      ['OpportunityId', 'reference', 'Opportunity'],
      ['StageName', 'picklist'],
      ['Amount', 'currency'],
      ['CloseDate', 'date'],
    ],
    readOnly: true,
    noLastModified: true,
  },
  OpportunityStage: {
    fields: [
      ['ApiName', 'string'],
      ['MasterLabel', 'string'],
      ['SortOrder', 'int'],
      ['IsActive', 'boolean'],
      ['IsClosed', 'boolean'],
      ['IsWon', 'boolean'],
      ['DefaultProbability', 'percent'],
    ],
    readOnly: true,
  },
  RecordType: { fields: [['Name', 'string'], ['SobjectType', 'picklist'], ['IsActive', 'boolean']], readOnly: true },
};

/** The brief's field lists: OpportunityContactRole and OpportunityHistory have no LastModifiedDate; the setup objects have no IsDeleted. */
function buildSchema(): Map<string, ObjectDef> {
  const out = new Map<string, ObjectDef>();
  for (const [name, src] of Object.entries(SCHEMA_SOURCE) as [SObjectName, (typeof SCHEMA_SOURCE)[SObjectName]][]) {
    const def: ObjectDef = { name, fields: new Map(), relationships: new Map(), readOnly: !!src.readOnly, byName: new Map(), template: {} };
    const setup = name === 'OpportunityStage' || name === 'RecordType';
    for (const [f, kind] of SYSTEM) {
      if (f === 'LastModifiedDate' && src.noLastModified) continue;
      if (f === 'IsDeleted' && setup) continue;
      def.fields.set(f.toLowerCase(), { name: f, kind, updateable: false });
    }
    for (const [f, kind, ref] of src.fields) {
      def.fields.set(f.toLowerCase(), { name: f, kind, updateable: !READONLY_FIELDS.has(f) && !src.readOnly, ...(ref ? { refTo: ref } : {}) });
      if (ref) {
        const rel = f.slice(0, -2); // AccountId → Account
        def.relationships.set(rel.toLowerCase(), { name: rel, field: f, refTo: ref });
      }
    }
    refreshTemplate(def);
    out.set(name.toLowerCase(), def);
  }
  return out;
}

function refreshTemplate(def: ObjectDef): void {
  def.byName = new Map([...def.fields.values()].map((f) => [f.name, f]));
  def.template = Object.fromEntries([...def.fields.values()].map((f) => [f.name, null]));
}

const fieldOf = (def: ObjectDef, name: string): FieldDef | undefined => def.byName.get(name) ?? def.fields.get(name.toLowerCase());

// ───────────────────────────── value helpers ─────────────────────────────

/** Internal row: datetimes as epoch ms, dates as 'YYYY-MM-DD', everything else as JSON. */
type Row = Record<string, string | number | boolean | null>;


/** REST JSON datetime form: 2026-11-01T00:00:00.000+0000. */
export function sfDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

function toMs(v: FieldInput): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'number') return v;
  const s = String(v).replace(/([+-]\d\d)(\d\d)$/, '$1:$2'); // +0000 → +00:00 for Date.parse
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`not a datetime: ${String(v)}`);
  return ms;
}

function toDate(v: FieldInput): string {
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v === 'number') return new Date(v).toISOString().slice(0, 10);
  const s = String(v);
  if (!/^\d{4}-\d\d-\d\d$/.test(s) || Number.isNaN(Date.parse(s))) throw new Error(`not a date: ${s}`);
  return s;
}

const isNumericKind = (k: Kind): boolean => k === 'double' || k === 'currency' || k === 'percent' || k === 'int';
const isTextKind = (k: Kind): boolean => k === 'string' || k === 'textarea' || k === 'email' || k === 'url' || k === 'picklist';

/** Coerces a test/PATCH value to the stored form; throws a message when it cannot. */
function coerce(field: FieldDef, v: unknown): string | number | boolean | null {
  if (v === null || v === undefined || v === '') return null;
  switch (field.kind) {
    case 'datetime':
      if (typeof v !== 'string' && typeof v !== 'number' && !(v instanceof Date)) throw new Error(`Cannot deserialize value for ${field.name} as dateTime`);
      return toMs(v);
    case 'date':
      if (typeof v !== 'string' && !(v instanceof Date)) throw new Error(`Cannot deserialize value for ${field.name} as date`);
      return toDate(v);
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw new Error(`Cannot deserialize instance of boolean from ${JSON.stringify(v)} for ${field.name}`);
    case 'double':
    case 'currency':
    case 'percent':
    case 'int': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (!Number.isFinite(n)) throw new Error(`Cannot deserialize instance of double from ${JSON.stringify(v)} for ${field.name}`);
      return field.kind === 'int' ? Math.trunc(n) : n;
    }
    case 'id':
    case 'reference':
      if (typeof v !== 'string') throw new Error(`Cannot deserialize instance of string from ${JSON.stringify(v)} for ${field.name}`);
      return normalizeId(v);
    default:
      if (typeof v === 'object') throw new Error(`Cannot deserialize instance of string from ${JSON.stringify(v)} for ${field.name}`);
      return String(v);
  }
}

function outValue(field: FieldDef, v: string | number | boolean | null | undefined): string | number | boolean | null {
  if (v === undefined || v === null) return null;
  if (field.kind === 'datetime') return sfDateTime(v as number);
  return v;
}

// ───────────────────────────── the org ─────────────────────────────

interface Table {
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

// ───────────────────────────── SOQL: tokenizer ─────────────────────────────

type TokKind = 'ident' | 'string' | 'number' | 'datetime' | 'date' | 'punct' | 'op' | 'eof';
interface Token {
  kind: TokKind;
  text: string;
  value?: string | number;
  pos: number;
}

const DATETIME_RE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)/y;
const DATE_RE = /\d{4}-\d\d-\d\d/y;
const NUMBER_RE = /-?\d+(\.\d+)?/y;
const IDENT_RE = /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/y;

function malformed(soql: string, pos: number, what: string): SalesforceApiError {
  return new SalesforceApiError(400, 'MALFORMED_QUERY', `\n${soql}\n${' '.repeat(Math.max(0, pos))}^\nERROR at Row:1:Column:${pos + 1}\n${what}`);
}

export function tokenize(soql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const at = (re: RegExp): string | null => {
    re.lastIndex = i;
    const m = re.exec(soql);
    return m ? m[0] : null;
  };
  while (i < soql.length) {
    const c = soql[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'") {
      let s = '';
      let j = i + 1;
      for (;;) {
        if (j >= soql.length) throw malformed(soql, i, 'line 1:' + i + ' mismatched character \'<EOF>\' expecting \'\'\'');
        const ch = soql[j]!;
        if (ch === '\\') {
          const n = soql[j + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '"': '"', "'": "'", '\\': '\\', _: '\\_', '%': '\\%' };
          if (n === undefined || map[n] === undefined) throw malformed(soql, j, `Invalid string literal '${soql.slice(i, j + 2)}'. Illegal character sequence '\\${n ?? ''}' in string literal.`);
          s += map[n];
          j += 2;
          continue;
        }
        if (ch === "'") break;
        s += ch;
        j++;
      }
      out.push({ kind: 'string', text: soql.slice(i, j + 1), value: s, pos: i });
      i = j + 1;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(soql[i + 1] ?? ''))) {
      const dt = at(DATETIME_RE);
      if (dt) {
        out.push({ kind: 'datetime', text: dt, value: Date.parse(dt), pos: i });
        i += dt.length;
        continue;
      }
      const d = at(DATE_RE);
      if (d && !/[0-9A-Za-z]/.test(soql[i + d.length] ?? '')) {
        if (Number.isNaN(Date.parse(d))) throw malformed(soql, i, `Invalid date: ${d}`);
        out.push({ kind: 'date', text: d, value: d, pos: i });
        i += d.length;
        continue;
      }
      const n = at(NUMBER_RE)!;
      out.push({ kind: 'number', text: n, value: Number(n), pos: i });
      i += n.length;
      continue;
    }
    const id = at(IDENT_RE);
    if (id) {
      out.push({ kind: 'ident', text: id, pos: i });
      i += id.length;
      continue;
    }
    const two = soql.slice(i, i + 2);
    if (two === '!=' || two === '<>' || two === '<=' || two === '>=') {
      out.push({ kind: 'op', text: two === '<>' ? '!=' : two, pos: i });
      i += 2;
      continue;
    }
    if (c === '=' || c === '<' || c === '>') {
      out.push({ kind: 'op', text: c, pos: i });
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      out.push({ kind: 'punct', text: c, pos: i });
      i++;
      continue;
    }
    throw malformed(soql, i, `line 1:${i} no viable alternative at character '${c}'`);
  }
  out.push({ kind: 'eof', text: '<EOF>', pos: soql.length });
  return out;
}

// ───────────────────────────── SOQL: parser ─────────────────────────────

type Literal = { kind: 'string' | 'number' | 'datetime' | 'date' | 'boolean' | 'null'; value: string | number | boolean | null; pos: number };

type Cond =
  | { t: 'and' | 'or'; items: Cond[] }
  | { t: 'not'; item: Cond }
  | { t: 'cmp'; field: string; fieldPos: number; op: string; lit: Literal }
  | { t: 'in'; field: string; fieldPos: number; not: boolean; lits: Literal[] }
  | { t: 'like'; field: string; fieldPos: number; lit: Literal };

export interface SoqlAst {
  select: ({ t: 'field'; path: string; pos: number } | { t: 'count'; field?: string; pos: number })[];
  from: string;
  fromPos: number;
  where?: Cond;
  orderBy: { path: string; pos: number; desc: boolean; nullsLast: boolean }[];
  limit?: number;
  offset?: number;
}

const KEYWORDS = new Set(['select', 'from', 'where', 'and', 'or', 'not', 'in', 'like', 'order', 'by', 'asc', 'desc', 'nulls', 'first', 'last', 'limit', 'offset', 'true', 'false', 'null']);

export function parseSoql(soql: string): SoqlAst {
  const toks = tokenize(soql);
  let p = 0;
  const peek = (): Token => toks[p]!;
  const isKw = (t: Token, kw: string): boolean => t.kind === 'ident' && t.text.toLowerCase() === kw;
  const fail = (t: Token): SalesforceApiError => malformed(soql, t.pos, t.kind === 'eof' ? 'unexpected token: <EOF>' : `unexpected token: '${t.text}'`);
  const expectKw = (kw: string): Token => {
    const t = peek();
    if (!isKw(t, kw)) throw fail(t);
    p++;
    return t;
  };
  const expectPunct = (c: string): void => {
    const t = peek();
    if (t.kind !== 'punct' || t.text !== c) throw fail(t);
    p++;
  };
  const fieldRef = (): Token => {
    const t = peek();
    if (t.kind !== 'ident' || KEYWORDS.has(t.text.toLowerCase())) throw fail(t);
    p++;
    return t;
  };

  expectKw('select');
  const select: SoqlAst['select'] = [];
  for (;;) {
    const t = peek();
    if (isKw(t, 'count') && toks[p + 1]?.text === '(') {
      p += 2;
      let field: string | undefined;
      if (peek().text !== ')') field = fieldRef().text;
      expectPunct(')');
      select.push({ t: 'count', pos: t.pos, ...(field ? { field } : {}) });
    } else {
      const f = fieldRef();
      if (peek().text === '(') throw malformed(soql, f.pos, `Unsupported function ${f.text}() in this stand-in`);
      select.push({ t: 'field', path: f.text, pos: f.pos });
    }
    if (peek().text === ',') {
      p++;
      continue;
    }
    break;
  }
  expectKw('from');
  const fromTok = fieldRef();
  if (fromTok.text.includes('.')) throw fail(fromTok);

  const literal = (): Literal => {
    const t = peek();
    p++;
    switch (t.kind) {
      case 'string':
        return { kind: 'string', value: t.value as string, pos: t.pos };
      case 'number':
        return { kind: 'number', value: t.value as number, pos: t.pos };
      case 'datetime':
        return { kind: 'datetime', value: t.value as number, pos: t.pos };
      case 'date':
        return { kind: 'date', value: t.value as string, pos: t.pos };
      case 'ident': {
        const k = t.text.toLowerCase();
        if (k === 'true' || k === 'false') return { kind: 'boolean', value: k === 'true', pos: t.pos };
        if (k === 'null') return { kind: 'null', value: null, pos: t.pos };
        break;
      }
    }
    throw fail(t);
  };

  // SOQL wants parentheses whenever logical operators are mixed at one level: A AND B OR C and
  // A AND NOT B are malformed; A AND (B OR C) and A AND (NOT B) are fine.
  const bareNot = new WeakMap<Cond, number>();
  const condition = (): Cond => {
    const first = unary();
    const t = peek();
    if (!isKw(t, 'and') && !isKw(t, 'or')) return first;
    const joiner = t.text.toLowerCase() as 'and' | 'or';
    const items = [first];
    while (isKw(peek(), 'and') || isKw(peek(), 'or')) {
      const j = peek();
      if (j.text.toLowerCase() !== joiner) throw fail(j);
      p++;
      items.push(unary());
    }
    for (const item of items) {
      const pos = bareNot.get(item);
      if (pos !== undefined) throw malformed(soql, pos, "unexpected token: 'NOT' (parentheses are required when mixing logical operators)");
    }
    return { t: joiner, items };
  };
  const unary = (): Cond => {
    if (isKw(peek(), 'not')) {
      const pos = peek().pos;
      p++;
      const c: Cond = { t: 'not', item: unary() };
      bareNot.set(c, pos);
      return c;
    }
    if (peek().text === '(' && peek().kind === 'punct') {
      p++;
      const c = condition();
      expectPunct(')');
      bareNot.delete(c); // (NOT x) is parenthesized
      return c;
    }
    const f = fieldRef();
    const t = peek();
    if (t.kind === 'op') {
      p++;
      return { t: 'cmp', field: f.text, fieldPos: f.pos, op: t.text, lit: literal() };
    }
    let not = false;
    if (isKw(t, 'not')) {
      not = true;
      p++;
      if (!isKw(peek(), 'in')) throw fail(peek());
    }
    if (isKw(peek(), 'in')) {
      p++;
      expectPunct('(');
      const lits: Literal[] = [literal()];
      while (peek().text === ',') {
        p++;
        lits.push(literal());
      }
      expectPunct(')');
      return { t: 'in', field: f.text, fieldPos: f.pos, not, lits };
    }
    if (isKw(peek(), 'like')) {
      p++;
      return { t: 'like', field: f.text, fieldPos: f.pos, lit: literal() };
    }
    throw fail(peek());
  };

  const ast: SoqlAst = { select, from: fromTok.text, fromPos: fromTok.pos, orderBy: [] };
  if (isKw(peek(), 'where')) {
    p++;
    ast.where = condition();
  }
  if (isKw(peek(), 'order')) {
    p++;
    expectKw('by');
    for (;;) {
      const f = fieldRef();
      let desc = false;
      if (isKw(peek(), 'asc')) p++;
      else if (isKw(peek(), 'desc')) {
        desc = true;
        p++;
      }
      let nullsLast = false; // SOQL sorts nulls first unless told otherwise
      if (isKw(peek(), 'nulls')) {
        p++;
        if (isKw(peek(), 'last')) nullsLast = true;
        else if (!isKw(peek(), 'first')) throw fail(peek());
        p++;
      }
      ast.orderBy.push({ path: f.text, pos: f.pos, desc, nullsLast });
      if (peek().text === ',') {
        p++;
        continue;
      }
      break;
    }
  }
  if (isKw(peek(), 'limit')) {
    p++;
    const t = peek();
    if (t.kind !== 'number' || !Number.isInteger(t.value) || (t.value as number) < 0) throw fail(t);
    p++;
    ast.limit = t.value as number;
  }
  if (isKw(peek(), 'offset')) {
    p++;
    const t = peek();
    if (t.kind !== 'number' || !Number.isInteger(t.value) || (t.value as number) < 0) throw fail(t);
    p++;
    ast.offset = t.value as number;
  }
  if (peek().kind !== 'eof') throw fail(peek());
  return ast;
}

// ───────────────────────────── SOQL: compile + run ─────────────────────────────

type Getter = (row: Row) => string | number | boolean | null | undefined;

interface Resolved {
  field: FieldDef;
  get: Getter;
  /** Canonical path segments: relationship names then the field name. */
  canonical: string[];
}

function invalidField(soql: string, pos: number, text: string): SalesforceApiError {
  return new SalesforceApiError(400, 'INVALID_FIELD', `\n${soql}\n${' '.repeat(pos)}^\nERROR at Row:1:Column:${pos + 1}\n${text}`);
}

function resolvePath(org: SalesforceOrg, soql: string, base: ObjectDef, path: string, pos: number): Resolved {
  const parts = path.split('.');
  // SOQL lets a path start with the FROM object's own name (SELECT Lead.Email FROM Lead).
  if (parts.length > 1 && parts[0]!.toLowerCase() === base.name.toLowerCase() && !base.relationships.has(parts[0]!.toLowerCase())) parts.shift();
  let def = base;
  const hops: { field: string; refTo: SObjectName }[] = [];
  const canonical: string[] = [];
  for (let i = 0; i < parts.length - 1; i++) {
    const rel = def.relationships.get(parts[i]!.toLowerCase());
    if (!rel) throw invalidField(soql, pos, `Didn't understand relationship '${parts[i]}' in field path. If you are attempting to use a custom relationship, be sure to append the '__r' after the custom relationship name. Please reference your WSDL or the describe call for the appropriate names.`);
    hops.push({ field: rel.field, refTo: rel.refTo });
    canonical.push(rel.name);
    def = org.object(rel.refTo)!;
  }
  const last = parts[parts.length - 1]!;
  const field = def.fields.get(last.toLowerCase());
  if (!field)
    throw invalidField(
      soql,
      pos,
      `No such column '${last}' on entity '${def.name}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`,
    );
  canonical.push(field.name);
  const name = field.name;
  let get: Getter;
  if (hops.length === 0) get = (r) => r[name];
  else
    get = (r) => {
      let cur: Row | undefined = r;
      for (const h of hops) {
        const ref = cur[h.field];
        if (typeof ref !== 'string') return null;
        cur = org.row(h.refTo, ref);
        if (!cur) return null;
      }
      return cur[name];
    };
  return { field, get, canonical };
}

function literalFor(soql: string, res: Resolved, lit: Literal): string | number | boolean | null {
  if (lit.kind === 'null') return null;
  const k = res.field.kind;
  const bad = (type: string, quoted: boolean): SalesforceApiError =>
    invalidField(soql, lit.pos, `value of filter criterion for field '${res.field.name}' must be of type ${type} and should ${quoted ? '' : 'not '}be enclosed in quotes`);
  if (k === 'datetime') {
    if (lit.kind !== 'datetime') throw bad('dateTime', false);
    return lit.value;
  }
  if (k === 'date') {
    if (lit.kind !== 'date') throw bad('date', false);
    return lit.value;
  }
  if (k === 'boolean') {
    if (lit.kind !== 'boolean') throw bad('boolean', false);
    return lit.value;
  }
  if (isNumericKind(k)) {
    if (lit.kind !== 'number') throw bad('double', false);
    return lit.value;
  }
  if (lit.kind !== 'string') throw bad('string', true);
  if (k === 'id' || k === 'reference') {
    const s = lit.value as string;
    if (s.length !== 15 && s.length !== 18) throw new SalesforceApiError(400, 'INVALID_QUERY_FILTER_OPERATOR', `invalid ID field: ${s}`);
    return normalizeId(s);
  }
  return lit.value;
}

function compileCond(org: SalesforceOrg, soql: string, def: ObjectDef, c: Cond): (r: Row) => boolean {
  switch (c.t) {
    case 'and': {
      const fs = c.items.map((i) => compileCond(org, soql, def, i));
      return (r) => fs.every((f) => f(r));
    }
    case 'or': {
      const fs = c.items.map((i) => compileCond(org, soql, def, i));
      return (r) => fs.some((f) => f(r));
    }
    case 'not': {
      const f = compileCond(org, soql, def, c.item);
      return (r) => !f(r);
    }
    case 'like': {
      const res = resolvePath(org, soql, def, c.field, c.fieldPos);
      if (!isTextKind(res.field.kind) || c.lit.kind !== 'string') throw invalidField(soql, c.fieldPos, `invalid operator on field '${res.field.name}': LIKE`);
      let re = '';
      const pat = c.lit.value as string;
      for (let i = 0; i < pat.length; i++) {
        const ch = pat[i]!;
        if (ch === '\\' && (pat[i + 1] === '%' || pat[i + 1] === '_')) re += pat[++i] === '%' ? '%' : '_';
        else if (ch === '%') re += '.*';
        else if (ch === '_') re += '.';
        else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      const rx = new RegExp(`^${re}$`, 'is');
      const get = res.get;
      return (r) => {
        const v = get(r);
        return typeof v === 'string' && rx.test(v);
      };
    }
    case 'in': {
      const res = resolvePath(org, soql, def, c.field, c.fieldPos);
      const text = isTextKind(res.field.kind);
      const set = new Set(c.lits.map((l) => {
        const v = literalFor(soql, res, l);
        return text && typeof v === 'string' ? v.toLowerCase() : v;
      }));
      const get = res.get;
      const not = c.not;
      return (r) => {
        let v = get(r) ?? null;
        if (text && typeof v === 'string') v = v.toLowerCase();
        return set.has(v) !== not;
      };
    }
    case 'cmp': {
      const res = resolvePath(org, soql, def, c.field, c.fieldPos);
      let lit = literalFor(soql, res, c.lit);
      const text = isTextKind(res.field.kind);
      if (text && typeof lit === 'string') lit = lit.toLowerCase(); // SOQL text comparison ignores case
      const get = res.get;
      const norm = text ? (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v) : (v: unknown) => v;
      const L = lit;
      switch (c.op) {
        case '=':
          return (r) => (norm(get(r)) ?? null) === L;
        case '!=':
          return (r) => (norm(get(r)) ?? null) !== L;
        default: {
          if (L === null) return () => false;
          const op = c.op;
          return (r) => {
            const v = norm(get(r));
            if (v === null || v === undefined) return false;
            const a = v as number | string;
            const b = L as number | string;
            return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
          };
        }
      }
    }
  }
}

interface Projection {
  /** Tree of output keys: a field name → getter, or a relationship name → sub-tree. */
  tree: ProjNode;
  columns: { header: string; get: Getter; field: FieldDef }[];
}
interface ProjNode {
  type: SObjectName;
  entries: Map<string, { field: FieldDef; name: string } | { rel: string; refField: string; node: ProjNode }>;
}

export interface CompiledQuery {
  ast: SoqlAst;
  type: SObjectName;
  count: 'none' | 'plain' | 'field';
  run(includeDeleted: boolean): Row[];
  projection: Projection;
}

export function compileQuery(org: SalesforceOrg, soql: string): CompiledQuery {
  const ast = parseSoql(soql);
  const def = org.object(ast.from);
  if (!def)
    throw new SalesforceApiError(400, 'INVALID_TYPE', `\n${soql}\n${' '.repeat(ast.fromPos)}^\nERROR at Row:1:Column:${ast.fromPos + 1}\nsObject type '${ast.from}' is not supported. If you are attempting to use a custom object, be sure to append the '__c' after the entity name. Please reference your WSDL or the describe call for the appropriate names.`);
  const counts = ast.select.filter((s) => s.t === 'count');
  let count: CompiledQuery['count'] = 'none';
  if (counts.length) {
    if (ast.select.length > 1 || counts.length > 1) throw malformed(soql, counts[0]!.pos, 'COUNT() and other fields cannot be mixed in this stand-in');
    count = (counts[0] as { field?: string }).field ? 'field' : 'plain';
    if (count === 'field') resolvePath(org, soql, def, (counts[0] as { field: string }).field, counts[0]!.pos);
  }
  const pred = ast.where ? compileCond(org, soql, def, ast.where) : () => true;
  const order = ast.orderBy.map((o) => ({ ...o, res: resolvePath(org, soql, def, o.path, o.pos) }));
  if (ast.offset !== undefined && ast.offset > 2000) throw new SalesforceApiError(400, 'NUMBER_OUTSIDE_VALID_RANGE', 'Maximum SOQL offset allowed is 2000');

  const tree: ProjNode = { type: def.name, entries: new Map() };
  const columns: Projection['columns'] = [];
  for (const s of ast.select) {
    if (s.t !== 'field') continue;
    const res = resolvePath(org, soql, def, s.path, s.pos);
    columns.push({ header: res.canonical.join('.'), get: res.get, field: res.field });
    let node = tree;
    let nodeDef = def;
    for (let i = 0; i < res.canonical.length - 1; i++) {
      const relName = res.canonical[i]!;
      const rel = nodeDef.relationships.get(relName.toLowerCase())!;
      let e = node.entries.get(relName);
      if (!e || !('node' in e)) {
        e = { rel: relName, refField: rel.field, node: { type: rel.refTo, entries: new Map() } };
        node.entries.set(relName, e);
      }
      node = e.node;
      nodeDef = org.object(rel.refTo)!;
    }
    node.entries.set(res.field.name, { field: res.field, name: res.field.name });
  }

  const type = def.name;
  const run = (includeDeleted: boolean): Row[] => {
    const rows = org.table(type).rows;
    const hasDeleted = def.fields.has('isdeleted');
    let out: Row[] = [];
    for (const r of rows) if ((includeDeleted || !hasDeleted || r['IsDeleted'] !== true) && pred(r)) out.push(r);
    if (order.length) {
      // Decorate once so the comparator does no lookups (keeps 100k-row sorts fast).
      const keys = out.map((r) =>
        order.map((o) => {
          const v = o.res.get(r);
          return typeof v === 'string' && isTextKind(o.res.field.kind) ? v.toLowerCase() : v ?? null;
        }),
      );
      const idx = out.map((_, i) => i);
      idx.sort((a, b) => {
        for (let k = 0; k < order.length; k++) {
          const x = keys[a]![k];
          const y = keys[b]![k];
          if (x === y) continue;
          const o = order[k]!;
          if (x === null) return o.nullsLast ? 1 : -1;
          if (y === null) return o.nullsLast ? -1 : 1;
          const c = (x as number) < (y as number) ? -1 : 1;
          return o.desc ? -c : c;
        }
        return a - b;
      });
      out = idx.map((i) => out[i]!);
    }
    const start = ast.offset ?? 0;
    if (start || ast.limit !== undefined) out = out.slice(start, ast.limit === undefined ? undefined : start + ast.limit);
    return out;
  };
  return { ast, type, count, run, projection: { tree, columns } };
}

function renderRecord(org: SalesforceOrg, version: string, node: ProjNode, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = { attributes: { type: node.type, url: `/services/data/${version}/sobjects/${node.type}/${row['Id']}` } };
  for (const [key, e] of node.entries) {
    if ('field' in e) out[key] = outValue(e.field, row[e.name]);
    else {
      const ref = row[e.refField];
      const target = typeof ref === 'string' ? org.row(e.node.type, ref) : undefined;
      out[key] = target ? renderRecord(org, version, e.node, target) : null;
    }
  }
  return out;
}

// ───────────────────────────── CSV ─────────────────────────────

function csvCell(field: FieldDef, v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = field.kind === 'datetime' ? new Date(v as number).toISOString() : String(v);
  return `"${s.replace(/"/g, '""')}"`;
}

// ───────────────────────────── JWT ─────────────────────────────

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

/**
 * Signs a JWT bearer assertion as a connected app would (RS256). `expSeconds` is the lifetime from
 * `now` (default 120 s; Salesforce allows at most 3 minutes); `exp` overrides with an absolute value.
 */
export function signJwtAssertion(input: { privateKeyPem: string; clientId: string; username: string; audience: string; expSeconds?: number; exp?: number; now?: Date; alg?: string }): string {
  const nowS = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const header = b64url(JSON.stringify({ alg: input.alg ?? 'RS256' }));
  const claims = b64url(JSON.stringify({ iss: input.clientId, sub: input.username, aud: input.audience, exp: input.exp ?? nowS + (input.expSeconds ?? 120) }));
  const signer = createSign('RSA-SHA256');
  signer.update(`${header}.${claims}`);
  return `${header}.${claims}.${signer.sign(input.privateKeyPem).toString('base64url')}`;
}

// ───────────────────────────── the server ─────────────────────────────

interface Session {
  username: string;
  issuedAt: number;
  revoked: boolean;
}

interface Cursor {
  rows: Row[];
  pageSize: number;
  projection: Projection;
  resource: string;
  lastUsed: number;
}

interface BulkJob {
  id: string;
  operation: 'query' | 'queryAll';
  object: SObjectName;
  query: CompiledQuery;
  createdDate: number;
  systemModstamp: number;
  polls: number;
  state: 'UploadComplete' | 'InProgress' | 'JobComplete' | 'Aborted';
  rows?: Row[];
  apiVersion: number;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json;charset=UTF-8', ...headers });
  res.end(text);
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const tokenError = (error: string, description: string): SalesforceReply => ({ status: 400, body: { error, error_description: description } });

/** The longest request URI Salesforce's REST API takes. */
export const MAX_URI_CHARS = 16_384;

export async function startSalesforceServer(options: SalesforceServerOptions = {}): Promise<SalesforceServer> {
  const clock = options.now ?? (() => new Date());
  const org = options.org ?? new SalesforceOrg({ now: clock });
  for (const f of options.customFields ?? []) org.declareField(f.type, f.name, f.kind);
  const clientIds = new Set(options.clientIds ?? ['3MVG9sightline.test.client']);
  const usernames = new Set(options.usernames ?? ['integration@sightline.test']);
  const sessions = new Map<string, Session>();
  const refresh = new Map<string, RefreshTokenGrant & { revoked: boolean }>();
  for (const r of options.refreshTokens ?? []) refresh.set(r.token, { ...r, revoked: false });
  const cursors = new Map<string, Cursor>();
  const jobs = new Map<string, BulkJob>();
  const calls: SalesforceCall[] = [];
  const scripted: (SalesforceReply | 'reset')[] = [];
  const signingSecret = randomBytes(32);
  let max = options.dailyAllocation ?? 15000;
  let used = 0;
  let seq = 0;
  let url = '';
  const batchSize = Math.min(Math.max(options.batchSize ?? 2000, 1), 2000);
  const sessionMs = (options.sessionSeconds ?? 7200) * 1000;
  const retentionMs = (options.deletedRetentionDays ?? 30) * 86400_000;
  const cursorIdleMs = (options.cursorIdleSeconds ?? 900) * 1000;
  const now = (): number => clock().getTime();
  const userId = (username: string): string => idChecksum(`0055e00000${b64url(createHmac('sha256', 'u').update(username).digest()).replace(/[^A-Za-z0-9]/g, '').slice(0, 5)}`);
  const opaque = (prefix: string): string => {
    seq += 1;
    let body = '';
    for (let x = seq, i = 0; i < 10; i++, x = Math.floor(x / 62)) body = BASE62[x % 62] + body;
    return idChecksum(`${prefix}5e${body}`);
  };

  const newSession = (username: string): string => {
    const token = `${org.orgId.slice(0, 15)}!${randomBytes(48).toString('base64url').replace(/[-_]/g, 'x')}`;
    sessions.set(token, { username, issuedAt: now(), revoked: false });
    return token;
  };
  const tokenAnswer = (username: string, scope: string): Record<string, string> => {
    const issued = String(now());
    const id = `${options.loginUrl ?? url}/id/${org.orgId}/${userId(username)}`;
    return {
      access_token: newSession(username),
      // HMAC-SHA256 over id + issued_at, base64, as Salesforce signs token answers.
      signature: createHmac('sha256', signingSecret).update(id + issued).digest('base64'),
      scope,
      instance_url: url,
      id,
      token_type: 'Bearer',
      issued_at: issued,
    };
  };

  const tokenGrant = (params: URLSearchParams): SalesforceReply => {
    const grant = params.get('grant_type');
    if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const assertion = params.get('assertion') ?? '';
      const parts = assertion.split('.');
      if (parts.length !== 3) return tokenError('invalid_grant', 'invalid assertion');
      let header: Record<string, unknown>;
      let claims: Record<string, unknown>;
      try {
        header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
        claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
      } catch {
        return tokenError('invalid_grant', 'invalid assertion');
      }
      if (header['alg'] !== 'RS256') return tokenError('invalid_grant', 'invalid assertion');
      if (typeof claims['iss'] !== 'string' || !clientIds.has(claims['iss'])) return tokenError('invalid_client_id', 'client identifier invalid');
      if (!options.jwtPublicKeyPem) return tokenError('invalid_grant', 'invalid assertion');
      const verifier = createVerify('RSA-SHA256');
      verifier.update(`${parts[0]}.${parts[1]}`);
      let ok = false;
      try {
        ok = verifier.verify(options.jwtPublicKeyPem, Buffer.from(parts[2]!, 'base64url'));
      } catch {
        ok = false;
      }
      if (!ok) return tokenError('invalid_grant', 'invalid assertion');
      const aud = claims['aud'];
      const expected = (options.loginUrl ?? url).replace(/\/$/, '');
      const audOk = (a: unknown): boolean => typeof a === 'string' && a.replace(/\/$/, '') === expected;
      if (!(Array.isArray(aud) ? aud.some(audOk) : audOk(aud))) return tokenError('invalid_grant', 'audience is invalid');
      const exp = claims['exp'];
      const nowS = now() / 1000;
      if (typeof exp !== 'number') return tokenError('invalid_grant', 'invalid assertion');
      if (exp <= nowS) return tokenError('invalid_grant', 'expired authorization code');
      if (exp > nowS + 180) return tokenError('invalid_grant', 'invalid assertion'); // Salesforce: exp within 3 minutes
      if (typeof claims['sub'] !== 'string' || !usernames.has(claims['sub'])) return tokenError('invalid_grant', "user hasn't approved this consumer");
      return { status: 200, body: tokenAnswer(claims['sub'], 'api') };
    }
    if (grant === 'refresh_token') {
      const clientId = params.get('client_id') ?? '';
      if (!clientIds.has(clientId)) return tokenError('invalid_client_id', 'client identifier invalid');
      const secret = params.get('client_secret');
      const wanted = options.clientSecrets?.[clientId];
      if (wanted !== undefined && secret !== null && secret !== wanted) return tokenError('invalid_client', 'invalid client credentials');
      const r = refresh.get(params.get('refresh_token') ?? '');
      if (!r || r.revoked || r.clientId !== clientId) return tokenError('invalid_grant', 'expired access/refresh token');
      return { status: 200, body: tokenAnswer(r.username, 'api refresh_token') };
    }
    return tokenError('unsupported_grant_type', 'grant type not supported');
  };

  const authOk = (req: IncomingMessage): boolean => {
    const h = req.headers['authorization'] ?? '';
    const m = /^(?:Bearer|OAuth)\s+(.+)$/i.exec(h);
    if (!m) return false;
    const token = m[1]!.trim();
    if (options.staticToken && token === options.staticToken && !sessions.get(token)?.revoked) return true;
    const s = sessions.get(token);
    return !!s && !s.revoked && now() - s.issuedAt < sessionMs;
  };

  const limitHeader = (): Record<string, string> => ({ 'Sforce-Limit-Info': `api-usage=${used}/${max}` });

  const queryPage = (version: string, cursorId: string, cursor: Cursor, offset: number): Record<string, unknown> => {
    const page = cursor.rows.slice(offset, offset + cursor.pageSize);
    const next = offset + page.length;
    const done = next >= cursor.rows.length;
    cursor.lastUsed = now();
    if (done) cursors.delete(cursorId);
    return {
      totalSize: cursor.rows.length,
      done,
      ...(done ? {} : { nextRecordsUrl: `/services/data/${version}/${cursor.resource}/${cursorId}-${next}` }),
      records: page.map((r) => renderRecord(org, version, cursor.projection.tree, r)),
    };
  };

  /** Sforce-Query-Options: batchSize=n asks for smaller batches (200–2,000); Salesforce treats it as a hint. */
  const requestedBatch = (req: IncomingMessage): number => {
    const m = /batchSize\s*=\s*(\d+)/i.exec(String(req.headers['sforce-query-options'] ?? ''));
    return m ? Math.min(batchSize, Math.max(200, Number(m[1]))) : batchSize;
  };

  const runQuery = (version: string, resource: 'query' | 'queryAll', soql: string | null, pageSize: number): Record<string, unknown> => {
    if (!soql) throw new SalesforceApiError(400, 'MALFORMED_QUERY', 'A query string has to be specified');
    const q = compileQuery(org, soql);
    const rows = q.run(resource === 'queryAll');
    if (q.count === 'plain') return { totalSize: rows.length, done: true, records: [] };
    if (q.count === 'field') return { totalSize: 1, done: true, records: [{ attributes: { type: 'AggregateResult' }, expr0: rows.length }] };
    const id = opaque('01g');
    const cursor: Cursor = { rows, pageSize, projection: q.projection, resource, lastUsed: now() };
    cursors.set(id, cursor);
    return queryPage(version, id, cursor, 0);
  };

  const getDeleted = (typeName: string, query: URLSearchParams): unknown => {
    const def = org.object(typeName);
    if (!def || !def.fields.has('isdeleted')) throw notFound();
    const startS = query.get('start');
    const endS = query.get('end');
    if (!startS || !endS) throw new SalesforceApiError(400, 'MISSING_ARGUMENT', `Missing required parameter: ${!startS ? 'start' : 'end'}`);
    let start: number;
    let end: number;
    try {
      start = toMs(startS);
      end = toMs(endS);
    } catch {
      throw new SalesforceApiError(400, 'INVALID_REPLICATION_DATE', 'start and end must be valid dateTime values');
    }
    // The delete log works to the minute: seconds are dropped from both ends.
    start = Math.floor(start / 60000) * 60000;
    end = Math.floor(end / 60000) * 60000;
    const t = now();
    const earliest = Math.floor((t - retentionMs) / 60000) * 60000;
    if (end - start < 60000) throw new SalesforceApiError(400, 'INVALID_REPLICATION_DATE', 'startDate must chronologically precede endDate by more than one minute');
    if (start < earliest) throw new SalesforceApiError(400, 'INVALID_REPLICATION_DATE', `startDate cannot be earlier than ${sfDateTime(earliest)}`);
    const covered = Math.min(end, Math.floor(t / 60000) * 60000);
    const deletedRecords: { id: string; deletedDate: string }[] = [];
    for (const r of org.table(def.name).rows) {
      if (r['IsDeleted'] !== true) continue;
      const d = r['SystemModstamp'] as number;
      if (d >= start && d < covered) deletedRecords.push({ id: r['Id'] as string, deletedDate: sfDateTime(d) });
    }
    return { deletedRecords, earliestDateAvailable: sfDateTime(earliest), latestDateCovered: sfDateTime(covered) };
  };

  const collectionsUpdate = (body: unknown): unknown => {
    const b = body as { allOrNone?: unknown; records?: unknown };
    if (typeof b !== 'object' || b === null || !Array.isArray(b.records)) throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'records is required and must be an array');
    if (b.records.length > 200) throw new SalesforceApiError(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call');
    const allOrNone = b.allOrNone === true;
    type Result = { id: string | null; success: boolean; errors: { statusCode: string; message: string; fields: string[] }[] };
    const plans: { rec: Record<string, unknown>; type: string; id: string; result: Result }[] = [];
    for (const raw of b.records as unknown[]) {
      const rec = (raw ?? {}) as Record<string, unknown>;
      const type = (rec['attributes'] as { type?: unknown } | undefined)?.type;
      const id = typeof rec['id'] === 'string' ? rec['id'] : typeof rec['Id'] === 'string' ? rec['Id'] : null;
      const result: Result = { id: id ? normalizeId(id) : null, success: true, errors: [] };
      const fail = (statusCode: string, message: string, fields: string[] = []): void => {
        result.success = false;
        result.errors.push({ statusCode, message, fields });
      };
      if (typeof type !== 'string') fail('INVALID_TYPE', 'sObject type is required in attributes');
      else if (!id) fail('MISSING_ARGUMENT', 'Id not specified in an update call');
      else {
        const fields: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(rec)) if (k !== 'attributes' && k.toLowerCase() !== 'id') fields[k] = v;
        const existing = org.object(type) ? org.row(org.object(type)!.name, id) : undefined;
        if (!org.object(type)) fail('INVALID_TYPE', `sObject type '${type}' is not supported.`);
        else if (!existing) fail('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id');
        else if (existing['IsDeleted'] === true) fail('ENTITY_IS_DELETED', 'entity is deleted');
        else
          try {
            org.apiUpdate(type, id, fields, true);
          } catch (e) {
            if (e instanceof SalesforceApiError) fail(e.errorCode, e.message, e.fields ?? []);
            else throw e;
          }
        plans.push({ rec: fields, type, id, result });
        continue;
      }
      plans.push({ rec, type: String(type), id: id ?? '', result });
    }
    const anyFailed = plans.some((p) => !p.result.success);
    if (allOrNone && anyFailed) {
      return plans.map((p) =>
        p.result.success ? { id: p.result.id, success: false, errors: [{ statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK', message: 'Record rolled back because not all records were valid and the request was using AllOrNone header', fields: [] }] } : p.result,
      );
    }
    for (const p of plans) if (p.result.success) org.apiUpdate(p.type, p.id, p.rec);
    return plans.map((p) => p.result);
  };

  const jobInfo = (job: BulkJob, detail: boolean): Record<string, unknown> => ({
    id: job.id,
    operation: job.operation,
    object: job.object,
    createdById: userId([...usernames][0] ?? 'integration'),
    createdDate: sfDateTime(job.createdDate),
    systemModstamp: sfDateTime(job.systemModstamp),
    state: job.state,
    concurrencyMode: 'Parallel',
    contentType: 'CSV',
    apiVersion: job.apiVersion,
    lineEnding: 'LF',
    columnDelimiter: 'COMMA',
    ...(detail ? { jobType: 'V2Query', numberRecordsProcessed: job.rows?.length ?? 0, retries: 0, totalProcessingTime: job.state === 'JobComplete' ? 250 : 0, isPkChunkingSupported: true } : {}),
  });

  const bulkError = (status: number, errorCode: string, message: string): SalesforceApiError => new SalesforceApiError(status, errorCode, message);

  /** Routes an authenticated, counted data call. Returns [status, body, extra headers]. */
  const route = async (req: IncomingMessage, version: string, rest: string, query: URLSearchParams, label: (l: string) => void): Promise<[number, unknown, Record<string, string>?]> => {
    const method = req.method ?? 'GET';
    const parts = rest.split('/').filter((s) => s !== '');
    const allow = (methods: string[]): void => {
      if (!methods.includes(method)) throw new SalesforceApiError(405, 'METHOD_NOT_ALLOWED', `HTTP Method '${method}' not allowed. Allowed are ${methods.join(',')}`);
    };
    const head = parts[0] ?? '';
    if ((head === 'query' || head === 'queryAll') && parts.length <= 2) {
      allow(['GET']);
      if (parts.length === 1) {
        label(head);
        return [200, runQuery(version, head, query.get('q'), requestedBatch(req))];
      }
      label('queryMore');
      const m = /^(.+)-(\d+)$/.exec(parts[1]!);
      const cursor = m ? cursors.get(m[1]!) : undefined;
      if (!m || !cursor || now() - cursor.lastUsed > cursorIdleMs) {
        if (m) cursors.delete(m[1]!);
        throw new SalesforceApiError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
      }
      return [200, queryPage(version, m[1]!, cursor, Number(m[2]))];
    }
    if (head === 'limits' && parts.length === 1) {
      allow(['GET']);
      label('limits');
      const bulkJobsToday = jobs.size;
      return [
        200,
        {
          DailyApiRequests: { Max: max, Remaining: Math.max(0, max - used) },
          DailyBulkV2QueryJobs: { Max: 10000, Remaining: Math.max(0, 10000 - bulkJobsToday) },
          DailyBulkV2QueryFileStorageMB: { Max: 976562, Remaining: 976562 },
          DailyAsyncApexExecutions: { Max: 250000, Remaining: 250000 },
          DataStorageMB: { Max: 1024, Remaining: 1000 },
        },
      ];
    }
    if (head === 'sobjects' && parts.length >= 3 && parts[2] === 'deleted') {
      allow(['GET']);
      label('getDeleted');
      return [200, getDeleted(parts[1]!, query)];
    }
    if (head === 'sobjects' && parts.length === 3) {
      allow(['PATCH']);
      label('patchRecord');
      const text = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'Unexpected character in request body');
      }
      org.apiUpdate(parts[1]!, parts[2]!, body);
      return [204, undefined];
    }
    if (head === 'composite' && parts[1] === 'sobjects' && parts.length === 2) {
      allow(['PATCH']);
      label('collectionsUpdate');
      const text = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'Unexpected character in request body');
      }
      return [200, collectionsUpdate(body)];
    }
    if (head === 'jobs' && parts[1] === 'query') {
      if (parts.length === 2) {
        allow(['POST']);
        label('bulkCreate');
        let body: { operation?: unknown; query?: unknown; contentType?: unknown; columnDelimiter?: unknown; lineEnding?: unknown };
        try {
          body = JSON.parse(await readBody(req));
        } catch {
          throw bulkError(400, 'InvalidJob', 'Unable to parse the job definition');
        }
        if (body.operation !== 'query' && body.operation !== 'queryAll') throw bulkError(400, 'API_ERROR', `Invalid operation: ${String(body.operation)}`);
        if (typeof body.query !== 'string') throw bulkError(400, 'API_ERROR', 'query is required');
        if ((body.contentType ?? 'CSV') !== 'CSV' || (body.columnDelimiter ?? 'COMMA') !== 'COMMA' || (body.lineEnding ?? 'LF') !== 'LF') throw bulkError(400, 'API_ERROR', 'This stand-in supports CSV with COMMA and LF only');
        const q = compileQuery(org, body.query);
        if (q.count !== 'none') throw bulkError(400, 'API_ERROR', 'Aggregate queries are not supported by Bulk API 2.0 query');
        if (q.ast.offset !== undefined) throw bulkError(400, 'API_ERROR', 'OFFSET is not supported by Bulk API 2.0 query');
        const t = now();
        const job: BulkJob = { id: opaque('750'), operation: body.operation, object: q.type, query: q, createdDate: t, systemModstamp: t, polls: 0, state: 'UploadComplete', apiVersion: Number(version.slice(1)) };
        jobs.set(job.id, job);
        return [200, jobInfo(job, false)];
      }
      const job = jobs.get(parts[2]!);
      if (parts.length === 3) {
        allow(['GET']);
        label('bulkStatus');
        if (!job) throw notFound();
        if (job.state !== 'JobComplete' && job.state !== 'Aborted') {
          job.polls += 1;
          if (job.polls > (options.bulkPollsBeforeDone ?? 1)) {
            job.rows = job.query.run(job.operation === 'queryAll');
            job.state = 'JobComplete';
          } else job.state = 'InProgress';
          job.systemModstamp = now();
        }
        return [200, jobInfo(job, true)];
      }
      if (parts.length === 4 && parts[3] === 'results') {
        allow(['GET']);
        label('bulkResults');
        if (!job) throw notFound();
        if (job.state !== 'JobComplete' || !job.rows) throw bulkError(400, 'API_ERROR', `Job ${job.id} is not complete: its state is ${job.state}`);
        const locator = query.get('locator');
        let offset = 0;
        if (locator) {
          const decoded = Number(Buffer.from(locator, 'base64url').toString('utf8'));
          if (!Number.isInteger(decoded) || decoded < 0 || decoded > job.rows.length) throw bulkError(400, 'API_ERROR', `Invalid locator: ${locator}`);
          offset = decoded;
        }
        const maxRecordsRaw = query.get('maxRecords');
        const maxRecords = maxRecordsRaw === null ? job.rows.length || 1 : Number(maxRecordsRaw);
        if (!Number.isInteger(maxRecords) || maxRecords < 1) throw bulkError(400, 'API_ERROR', `Invalid maxRecords: ${maxRecordsRaw}`);
        const page = job.rows.slice(offset, offset + maxRecords);
        const next = offset + page.length;
        const cols = job.query.projection.columns;
        const lines = [cols.map((c) => `"${c.header}"`).join(',')];
        for (const r of page) lines.push(cols.map((c) => csvCell(c.field, c.get(r))).join(','));
        return [
          200,
          lines.join('\n') + '\n',
          { 'Content-Type': 'text/csv', 'Sforce-Locator': next < job.rows.length ? Buffer.from(String(next)).toString('base64url') : 'null', 'Sforce-NumberOfRecords': String(page.length) },
        ];
      }
    }
    label('unknown');
    throw notFound();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if ((req.url ?? '').length > MAX_URI_CHARS) {
      // Salesforce refuses a request URI over 16,384 characters before it reads anything else.
      calls.push({ method: req.method ?? 'GET', path: (req.url ?? '').split('?')[0] ?? '', query: {}, status: 414, endpoint: 'unknown', at: now() });
      res.writeHead(414, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify([{ errorCode: 'URI_TOO_LONG', message: `The request URI is longer than ${MAX_URI_CHARS} characters.` }]));
      return;
    }
    const u = new URL(req.url ?? '/', 'http://localhost');
    const query: Record<string, string> = {};
    u.searchParams.forEach((v, k) => (query[k] = v));
    const call: SalesforceCall = { method: req.method ?? 'GET', path: u.pathname, query, status: 0, endpoint: 'unknown', at: now() };
    calls.push(call);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      call.status = status;
      if (headers['Content-Type']?.startsWith('text/csv')) {
        res.writeHead(status, headers);
        res.end(body as string);
      } else json(res, status, body, headers);
    };
    const isData = u.pathname.startsWith('/services/data');

    const next = scripted.shift();
    if (next === 'reset') {
      call.status = -1;
      req.socket.destroy();
      return;
    }
    if (next) {
      send(next.status, next.body, { ...(isData ? limitHeader() : {}), ...(next.headers ?? {}) });
      return;
    }

    if (u.pathname === '/services/oauth2/token') {
      call.endpoint = 'token';
      if (req.method !== 'POST') return send(405, { error: 'invalid_request', error_description: 'must use HTTP POST' });
      const text = await readBody(req);
      const params = new URLSearchParams(text);
      u.searchParams.forEach((v, k) => {
        if (!params.has(k)) params.set(k, v);
      });
      const a = tokenGrant(params);
      return send(a.status, a.body);
    }
    if (!isData) return send(404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
    if (u.pathname === '/services/data' || u.pathname === '/services/data/') {
      // The versions list needs no session and does not count against the allocation.
      call.endpoint = 'versions';
      return send(200, [62, 63, 64, 65, 66, 67, 68].map((v) => ({ label: `v${v}.0`, url: `/services/data/v${v}.0`, version: `${v}.0` })));
    }
    const m = /^\/services\/data\/(v\d{2,3}\.0)(\/.*)?$/.exec(u.pathname);
    if (!m) return send(404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
    if (!authOk(req)) return send(401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }]);
    if (used >= max) return send(403, [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }], limitHeader());
    used += 1;
    try {
      const [status, body, headers] = await route(req, m[1]!, m[2] ?? '/', u.searchParams, (l) => (call.endpoint = l));
      send(status, body, { ...limitHeader(), ...(headers ?? {}) });
    } catch (e) {
      if (e instanceof SalesforceApiError) send(e.status, e.body(), limitHeader());
      else send(500, [{ errorCode: 'UNKNOWN_EXCEPTION', message: `An unexpected error occurred. ${(e as Error).message}` }], limitHeader());
    }
  };

  // Room for a long request line, so an over-long URI gets Salesforce's own answer (414), not Node's 431.
  const server: Server = createServer({ maxHeaderSize: 256 * 1024 }, (req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    org,
    calls,
    usage: () => ({ used, max }),
    resetAllocation(newMax?: number) {
      used = 0;
      if (newMax !== undefined) max = newMax;
    },
    failNext(...answers) {
      scripted.push(...answers);
    },
    revokeToken(token) {
      const s = sessions.get(token);
      if (s) s.revoked = true;
      else sessions.set(token, { username: '', issuedAt: 0, revoked: true }); // also covers the static token
    },
    revokeRefreshToken(token) {
      const r = refresh.get(token);
      if (r) r.revoked = true;
    },
    issuedTokens() {
      return [...sessions].filter(([, s]) => !s.revoked && now() - s.issuedAt < sessionMs).map(([t]) => t);
    },
    issueToken(username?: string) {
      return newSession(username ?? [...usernames][0] ?? 'integration@sightline.test');
    },
    issueRefreshToken(clientId?: string, username?: string) {
      const token = `5Aep861${randomBytes(40).toString('base64url').replace(/[-_]/g, 'x')}`;
      refresh.set(token, { token, clientId: clientId ?? [...clientIds][0]!, username: username ?? [...usernames][0]!, revoked: false });
      return token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ───────────────────────────── seeding ─────────────────────────────

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
