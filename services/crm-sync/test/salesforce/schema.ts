// Object and field definitions for the sObjects the stand-in serves; queries, PATCHes and
// inserts all check against these, as Salesforce checks its describe metadata.
import type { SObjectName } from './types';
import type { Row } from './values';

export type Kind = 'id' | 'reference' | 'string' | 'textarea' | 'email' | 'url' | 'picklist' | 'boolean' | 'double' | 'currency' | 'percent' | 'int' | 'date' | 'datetime';

export interface FieldDef {
  name: string;
  kind: Kind;
  updateable: boolean;
  refTo?: SObjectName;
}

export interface ObjectDef {
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

export const SCHEMA_SOURCE: Record<SObjectName, { fields: [string, Kind, SObjectName?][]; readOnly?: boolean; noLastModified?: boolean }> = {
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
export function buildSchema(): Map<string, ObjectDef> {
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

export function refreshTemplate(def: ObjectDef): void {
  def.byName = new Map([...def.fields.values()].map((f) => [f.name, f]));
  def.template = Object.fromEntries([...def.fields.values()].map((f) => [f.name, null]));
}

export const fieldOf = (def: ObjectDef, name: string): FieldDef | undefined => def.byName.get(name) ?? def.fields.get(name.toLowerCase());
