// Salesforce-style ids: 15→18 checksum and per-object key prefixes, so ids look real to the
// connector (prefix routing, case-insensitive 18-character forms).
import type { SObjectName } from './types';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
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

export function normalizeId(id: string): string {
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
