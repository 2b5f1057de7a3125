// Hostile requests generated from the served OpenAPI document: for every operation it describes
// (so operations added later are covered without touching this file), a plausible request and its
// mutations: wrong types, broken encodings, sizes, depths, ids, cursors, dates and bodies, plus
// requests without a key, with a bad one, with the wrong method. Every field of every body, however
// deep (fields.ts), gets deep and wide objects, 100 KB strings, arrays past every bound and wrong
// types; every parameter a 100 KB value. Deterministic: the same document gives the same corpus.
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { fieldsOf, withValueAt, type Field } from './fields';

export interface FuzzCase {
  /** `<METHOD> <path template> · <what is hostile>`: names a failing case in the report. */
  name: string;
  method: string;
  /** Path and query, already encoded as they go on the wire (hostile encodings included). */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The statuses the operation's responses document: a 501 or 503 is a defect unless listed here. */
  documented: number[];
}

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  style?: string;
  explode?: boolean;
}
interface OperationShape {
  method: string;
  path: string;
  parameters: Parameter[];
  body: Schema | null;
  /** Statuses of its documented responses. */
  statuses: number[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const FIXED_ID = '5b0c2a3e-9d4f-4e8a-9a51-3c2f7d6e1a0b';
const DEEP = 5_000;
const LONG = 100_000;
const COMPRESSORS: [string, (data: Buffer) => Buffer][] = [
  ['gzip', (d) => gzipSync(d)],
  ['deflate', (d) => deflateSync(d)],
  ['br', (d) => brotliCompressSync(d, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })],
];
/** Stands for a value written into the body's JSON text as is (nesting JSON.stringify cannot write). */
const RAW_SLOT = '__fuzz_raw_value__';
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** An object with `count` short keys, as JSON text. */
const wideObject = (count: number) => `{${Array.from({ length: count }, (_, i) => `"${i.toString(36)}":0`).join(',')}}`;
/** Wrong types for any field (a type the field takes is tried too: the answer must still be sound). */
const WRONG_TYPES: [string, unknown][] = [['number', 12345], ['string', 'text'], ['null', null], ['object', { a: 1 }], ['array', [1, 2]], ['boolean', false], ['huge number', 1e308], ['negative', -1]];

/** Hostile values any string parameter or field is tried with, as they go on the wire (query) or in JSON. */
const HOSTILE_QUERY_TEXT: [string, string][] = [
  ['NUL byte', 'a%00b'],
  ['invalid UTF-8 (encoded lone surrogate)', '%ED%A0%80'],
  ['bad percent-encoding', '%zz'],
  ['10,000 characters', 'x'.repeat(10_000)],
  ['SQL and ClickHouse injection', encodeURIComponent("x' OR 1=1; DROP TABLE events; --")],
];
const HOSTILE_JSON_TEXT: [string, unknown][] = [
  ['NUL byte', 'a\u0000b'],
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate', 'x\udc00'],
  ['empty string', ''],
  ['100,000 characters', 'x'.repeat(100_000)],
];
const HOSTILE_DATES = ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2016-12-31T23:59:60Z', '1970-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '2025-02-30T00:00:00Z', 'yesterday', '2025-01-01', '2025-01-01T00:00:00+25:00', '2025-13-01T00:00:00Z'];
const HOSTILE_NUMBERS = ['abc', '1.5', '-1', '0', '1e9', '1e400', '99999999999999999999', '0x10', '', 'NaN', 'Infinity', '2147483648', '-0', '1_000', '+5', '0.0000001'];
const HOSTILE_IDS: [string, string][] = [
  ['bad percent-encoding', '%zz'],
  ['urn:uuid: prefix', `urn:uuid:${FIXED_ID}`],
  ['NUL byte', '%00'],
  ['invalid UTF-8', '%ED%A0%80'],
  ['5,000 characters', 'a'.repeat(5_000)],
  ['upper-case uuid', FIXED_ID.toUpperCase()],
  ['path traversal', '..%2F..%2Fadmin'],
  ['injection', encodeURIComponent("1' OR '1'='1")],
  ['emoji', '%F0%9F%98%80'],
];
const HOSTILE_CURSORS = ['abc', 'eyJ4IjoxfQ', `${'A'.repeat(4_000)}`, 'null', '%00'];

function resolve(document: Schema, value: unknown, seen = new Set<string>()): Schema {
  let node = value as Schema;
  while (node && typeof node === 'object' && typeof node['$ref'] === 'string') {
    const ref = node['$ref'] as string;
    if (seen.has(ref)) return {};
    seen.add(ref);
    node = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, part) => (at as Schema | undefined)?.[part], document) as Schema;
  }
  return node ?? {};
}

/** The document's operations with their parameters and body schema resolved. */
export function operationsOf(document: Schema): OperationShape[] {
  const out: OperationShape[] = [];
  for (const [path, rawItem] of Object.entries(document['paths'] as Record<string, Schema>)) {
    const item = resolve(document, rawItem);
    const shared = ((item['parameters'] as unknown[]) ?? []).map((p) => resolve(document, p) as unknown as Parameter);
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      const parameters = [...shared, ...((op['parameters'] as unknown[]) ?? []).map((p) => resolve(document, p) as unknown as Parameter)];
      const content = (resolve(document, op['requestBody'])['content'] as Record<string, Schema> | undefined)?.['application/json'];
      const statuses = Object.keys((op['responses'] as Schema | undefined) ?? {}).map(Number).filter(Number.isInteger);
      out.push({ method: method.toUpperCase(), path, parameters, body: content ? resolve(document, content['schema']) : null, statuses });
    }
  }
  return out;
}

/** A value the schema accepts where that is easy to build; enough to get past the first checks. */
export function sample(document: Schema, raw: unknown, depth = 0): unknown {
  const schema = resolve(document, raw);
  if (depth > 6) return null;
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  if (Array.isArray(schema['examples']) && schema['examples'].length > 0) return schema['examples'][0];
  if ('default' in schema) return schema['default'];
  for (const key of ['oneOf', 'anyOf']) {
    const branches = schema[key] as unknown[] | undefined;
    if (branches) return sample(document, branches.find((b) => resolve(document, b)['type'] !== 'null') ?? branches[0], depth + 1);
  }
  if (Array.isArray(schema['allOf'])) {
    return Object.assign({}, ...(schema['allOf'] as unknown[]).map((s) => sample(document, s, depth + 1) as object));
  }
  const type = Array.isArray(schema['type']) ? (schema['type'] as string[]).find((t) => t !== 'null') : schema['type'];
  switch (type) {
    case 'object': {
      const properties = (schema['properties'] as Record<string, unknown> | undefined) ?? {};
      const required = (schema['required'] as string[] | undefined) ?? [];
      return Object.fromEntries(required.map((name) => [name, sample(document, properties[name] ?? {}, depth + 1)]));
    }
    case 'array': {
      const count = Math.max(1, Number(schema['minItems'] ?? 1));
      return Array.from({ length: count }, (_, i) => {
        const item = sample(document, schema['items'] ?? {}, depth + 1);
        return typeof item === 'string' && count > 1 ? `${item}${i}` : item;
      });
    }
    case 'integer':
    case 'number':
      return Number(schema['minimum'] ?? 1);
    case 'boolean':
      return true;
    case 'string': {
      if (schema['format'] === 'date-time') return '2025-01-01T00:00:00Z';
      if (schema['format'] === 'uuid') return FIXED_ID;
      if (schema['format'] === 'email') return 'fuzz@example.com';
      if (schema['pattern'] === '^[A-Z]{3}$') return 'EUR';
      return 'x'.repeat(Math.max(1, Number(schema['minLength'] ?? 1)));
    }
    default:
      return {};
  }
}

function queryValue(document: Schema, param: Parameter): string {
  const value = sample(document, param.schema ?? {});
  return Array.isArray(value) ? value.map(String).join(',') : String(value);
}

/** The corpus for one document; `website` is the domain requests name. */
export function buildCorpus(document: Schema, website: string): FuzzCase[] {
  const cases: FuzzCase[] = [];
  // Compressed once, sent to every operation with a body.
  const compressed = COMPRESSORS.map(([name, compress]) => [name, compress(Buffer.alloc(50_000_000, 32)), compress(Buffer.from(`{"a":${deepObject(100_000)}}`))] as const);
  const json = { 'content-type': 'application/json' };
  for (const op of operationsOf(document)) {
    const label = `${op.method} ${op.path}`;
    const query = new Map<string, string>();
    for (const p of op.parameters.filter((q) => q.in === 'query')) {
      if (p.name === 'website') query.set('website', website);
      else if (p.required) query.set(p.name, encodeURIComponent(queryValue(document, p)));
    }
    const pathOf = (id: string) => op.path.replace(/\{[^}]+\}/g, id);
    const urlOf = (path: string, q: Map<string, string>, extra = '') => {
      const parts = [...q].map(([k, v]) => `${k}=${v}`);
      if (extra) parts.push(extra);
      return `${path}${parts.length ? `?${parts.join('&')}` : ''}`;
    };
    const baseUrl = urlOf(pathOf(FIXED_ID), query);
    const baseBody = op.body ? JSON.stringify(sample(document, op.body)) : undefined;
    const add = (what: string, c: Omit<FuzzCase, 'name' | 'method' | 'headers' | 'documented'> & { method?: string; headers?: Record<string, string> }) =>
      cases.push({ name: `${label} · ${what}`, method: c.method ?? op.method, url: c.url, headers: c.headers ?? (op.body ? json : {}), ...(c.body !== undefined ? { body: c.body } : {}), documented: op.statuses });
    const withBody = baseBody === undefined ? {} : { body: baseBody };

    // The request itself, then who is asking.
    add('plausible request', { url: baseUrl, ...withBody });
    add('no key', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), 'x-fuzz-key': 'none' } });
    add('malformed key', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), 'x-fuzz-key': 'Bearer not-a-key' } });
    add('unknown key', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), 'x-fuzz-key': `Bearer sl_aaaaaaaaaaaa_${'0'.repeat(48)}` } });
    add('key in the query string', { url: urlOf(pathOf(FIXED_ID), query, 'api_key=sl_x_y'), ...withBody });
    const wrong = ['DELETE', 'PUT', 'POST', 'GET'].find((m) => m !== op.method) as string;
    add(`wrong method ${wrong}`, { method: wrong, url: baseUrl });
    for (const method of ['HEAD', 'OPTIONS', 'PUT']) if (method !== op.method) add(`method ${method}`, { method, url: baseUrl });
    add('without the /v1 prefix', { url: baseUrl.replace(/^\/v1\//, '/'), ...withBody });
    add('trailing slash', { url: baseUrl.replace(/\?|$/, (m) => `/${m}`), ...withBody });
    add('doubled slash', { url: baseUrl.replace(/^\/v1\//, '/v1//'), ...withBody });
    add('unknown query parameter', { url: urlOf(pathOf(FIXED_ID), query, 'bogus=1'), ...withBody });
    add('website that is not reachable', { url: baseUrl.replace(`website=${website}`, 'website=nowhere.example'), ...withBody });
    add('Accept: application/xml', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), accept: 'application/xml' } });
    add('lower-case bearer scheme', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), 'x-fuzz-key': 'bearer-lower' } });
    add('Basic authorization', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), 'x-fuzz-key': `Basic ${Buffer.from('a:b').toString('base64')}` } });
    add('forged X-Forwarded-For', { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), 'x-forwarded-for': `${'1.2.3.4, '.repeat(500)}not-an-address` } });
    if (query.has('website')) {
      for (const [what, value] of [['100,000 characters', 'w'.repeat(LONG)], ['NUL byte', 'shop%00.test'], ['upper case', website.toUpperCase()], ['given twice', `${website}&website=${website}`], ['empty', ''], ['injection', encodeURIComponent("x' OR 1=1 --")], ['bracketed', `${website}&website[a]=1`]] as [string, string][]) {
        add(`website: ${what}`, { url: baseUrl.replace(`website=${website}`, `website=${value}`), ...withBody });
      }
    }

    // Path ids.
    if (op.path.includes('{')) for (const [what, id] of [...HOSTILE_IDS, ['100,000 characters', 'a'.repeat(LONG)] as [string, string]]) add(`id: ${what}`, { url: urlOf(pathOf(id), query), ...withBody });

    // Header parameters (Idempotency-Key): long and empty values.
    for (const p of op.parameters.filter((h) => h.in === 'header')) {
      for (const [what, value] of [['100,000 characters', 'k'.repeat(LONG)], ['1,000 characters', 'k'.repeat(1_000)], ['empty', ''], ['injection', "1' OR '1'='1"]] as [string, string][]) {
        add(`header ${p.name}: ${what}`, { url: baseUrl, ...withBody, headers: { ...(op.body ? json : {}), [p.name.toLowerCase()]: value } });
      }
    }
    // Operations without a body (DELETE), sent one anyway: it is not read. (fetch sends no GET body.)
    if (!op.body && op.method !== 'GET') add('unexpected deep JSON body', { url: baseUrl, headers: json, body: deepObject(DEEP) });

    // Query parameters, one at a time.
    for (const p of op.parameters.filter((q) => q.in === 'query' && q.name !== 'website')) {
      const schema = resolve(document, p.schema ?? {});
      const type = schema['type'];
      const set = (what: string, value: string) => {
        const q = new Map(query);
        q.set(p.name, value);
        add(`${p.name}: ${what}`, { url: urlOf(pathOf(FIXED_ID), q), ...withBody });
      };
      for (const [what, value] of HOSTILE_QUERY_TEXT) set(what, value);
      set('100,000 characters', 'x'.repeat(LONG));
      set('14,000 characters', 'x'.repeat(14_000));
      // Bracket syntax, which some query parsers turn into nested objects and arrays.
      set('bracketed as an array', `1&${p.name}[]=2`);
      set('bracketed as a nested object', `1&${p.name}[a][b][c]=1`);
      set('a JSON object', encodeURIComponent('{"a":{"b":1}}'));
      set('given twice', `${queryValue(document, p)}&${p.name}=${queryValue(document, p)}`);
      set('empty', '');
      if (type === 'integer' || type === 'number') for (const n of HOSTILE_NUMBERS) set(`number ${JSON.stringify(n)}`, encodeURIComponent(n));
      if (type === 'boolean') for (const b of ['yes', '1', 'TRUE', 'null']) set(`boolean ${b}`, b);
      if (schema['format'] === 'date-time') for (const d of HOSTILE_DATES) set(`date ${d}`, encodeURIComponent(d));
      if (Array.isArray(schema['enum'])) set('outside its set', 'bogus');
      if (type === 'array') {
        set('1,000 items', Array.from({ length: 1_000 }, (_, i) => `v${i}`).join(','));
        set('items outside their set', 'bogus,also_bogus');
        const first = encodeURIComponent(String((sample(document, schema) as unknown[] | undefined)?.[0] ?? 'v'));
        if (typeof schema['maxItems'] === 'number') set(`${schema['maxItems'] as number + 1} items (one past maxItems)`, Array.from({ length: (schema['maxItems'] as number) + 1 }, () => first).join(','));
        set('5,000 empty items', ','.repeat(5_000));
      }
      if (p.name === 'cursor') for (const c of HOSTILE_CURSORS) set(`cursor ${c.slice(0, 12)}`, encodeURIComponent(c));
      if (p.name === 'filter') for (const f of ['country:eq:D%00E', 'country', ':::', 'country:regex:.*', `country:in:${'x|'.repeat(2_000)}`]) set(`filter ${f.slice(0, 20)}`, f);
      if (p.name === 'period') for (const text of ['last 100000 days', '0000-01-01..9999-12-31', 'March 0000', '1970-01-01..1970-01-02']) set(`period ${text}`, encodeURIComponent(text));
    }
    if (op.parameters.some((q) => q.name === 'to')) {
      const q = new Map(query);
      q.set('to', encodeURIComponent('1970-01-01T00:00:00Z'));
      add('to=1970-01-01T00:00:00Z alone', { url: urlOf(pathOf(FIXED_ID), q) });
    }

    // Bodies.
    if (op.body) {
      const body = (text: string | Buffer, what: string, headers: Record<string, string> = json) => add(what, { url: baseUrl, body: text, headers });
      body('{"unterminated": ', 'body: not JSON');
      body('null', 'body: JSON null');
      body('[]', 'body: an array');
      body('"text"', 'body: a string');
      body('{}', 'body: empty object');
      body(`${'['.repeat(DEEP)}${']'.repeat(DEEP)}`, `body: nested ${DEEP} levels`);
      body(`{"a":${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}}`, `body: objects nested ${DEEP} levels`);
      body(baseBody ?? '{}', 'body: declared gzip, sent plain', { ...json, 'content-encoding': 'gzip' });
      body(gzipSync(baseBody ?? '{}'), 'body: gzip');
      // Compression bombs: a few KB on the wire, past the 2 MB limit once decompressed; and deep JSON compressed.
      for (const [name, bomb, deep] of compressed) {
        body(bomb, `body: ${name} bomb (50 MB of spaces)`, { ...json, 'content-encoding': name });
        body(deep, `body: ${name}, objects nested 100,000 levels`, { ...json, 'content-encoding': name });
      }
      body(Buffer.concat([gzipSync(baseBody ?? '{}').subarray(0, 10), Buffer.from('broken')]), 'body: truncated gzip', { ...json, 'content-encoding': 'gzip' });
      body(baseBody ?? '{}', 'body: form content type', { 'content-type': 'application/x-www-form-urlencoded' });
      body(baseBody ?? '{}', 'body: latin1 charset', { 'content-type': 'application/json; charset=latin1' });
      body(baseBody ?? '{}', 'body: unknown content encoding', { ...json, 'content-encoding': 'compress' });
      body(JSON.stringify({ pad: 'x'.repeat(2_200_000) }), 'body: over 2 MB');
      body(JSON.stringify({ ...(JSON.parse(baseBody ?? '{}') as object), ['extra\u0000']: 1 }), 'body: NUL in a property name');
      const base = JSON.parse(baseBody ?? '{}') as Record<string, unknown>;
      const properties = (resolve(document, op.body)['properties'] as Record<string, unknown> | undefined) ?? {};
      for (const [name, raw] of Object.entries(properties)) {
        const schema = resolve(document, raw);
        const set = (what: string, value: unknown) => body(JSON.stringify({ ...base, [name]: value }), `body ${name}: ${what}`);
        for (const [what, value] of [['number', 12345], ['string', 'text'], ['null', null], ['object', { a: 1 }], ['array', [1, 2]], ['boolean', false], ['huge number', 1e308], ['negative', -1]] as [string, unknown][]) set(what, value);
        for (const [what, value] of HOSTILE_JSON_TEXT) set(what, value);
        if (schema['format'] === 'date-time') for (const d of HOSTILE_DATES) set(`date ${d}`, d);
        if (schema['type'] === 'array') {
          set('10,000 items', Array.from({ length: 10_000 }, () => sample(document, schema['items'] ?? {})));
          const item = sample(document, schema['items'] ?? {});
          if (item && typeof item === 'object' && !Array.isArray(item)) {
            // Items checked one by one (POST /events): hostile content inside an item.
            for (const [what, value] of HOSTILE_JSON_TEXT) set(`an item holding ${what}`, [{ ...(item as object), event_type: 'custom', anonymous_id: value }, item]);
            set('an item with a leap second', [{ ...(item as object), occurred_at: '2016-12-31T23:59:60Z' }, item]);
            set('an item with year 0000', [{ ...(item as object), occurred_at: '0000-01-01T00:00:00Z' }, item]);
            set('an item with a lone surrogate in properties', [{ ...(item as object), properties: { ['k\ud800']: 'v', v: '\udfff' } }, item]);
            set('an item nested 40 levels', [{ ...(item as object), properties: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) as object }, item]);
          }
        }
      }
      for (const field of fieldsOf((value) => resolve(document, value), op.body)) addFieldCases(document, field, base, (what, text) => body(text, what));
    }
  }
  return cases;
}

/**
 * Hostile values for one field of a body, however deep: deep and wide objects where it is an object or
 * free-form, 100 KB strings, arrays past its maxItems and large ones within the body limit, wrong types.
 * Top-level fields already get the wrong types and hostile strings above.
 */
function addFieldCases(document: Schema, field: Field, base: unknown, add: (what: string, body: string) => void): void {
  const where = `field ${field.path.join('.')}`;
  const json = (value: unknown) => JSON.stringify(withValueAt(base, field.path, value));
  const raw = (text: string) => json(RAW_SLOT).replace(`"${RAW_SLOT}"`, text);
  const nested = field.path.length > 1;
  const takes = (type: string) => field.types.has(type) || field.types.has('any');
  if (takes('object')) {
    add(`${where}: objects nested ${DEEP} levels`, raw(deepObject(DEEP)));
    add(`${where}: arrays nested ${DEEP} levels`, raw(deepArray(DEEP)));
    add(`${where}: 20,000 keys`, raw(wideObject(20_000)));
    add(`${where}: 120,000 keys (past the body's value limit)`, raw(wideObject(120_000)));
    add(`${where}: a 100,000-character key`, json({ ['k'.repeat(LONG)]: 1 }));
  }
  if (takes('string') && nested) {
    add(`${where}: 100,000 characters`, json('x'.repeat(LONG)));
    add(`${where}: NUL byte`, json('a\u0000b'));
    add(`${where}: lone surrogate`, json('x\ud800'));
    add(`${where}: empty string`, json(''));
  }
  if (takes('array')) {
    const item = sample(document, field.items ?? {});
    const itemText = JSON.stringify(item) ?? 'null';
    const items = (count: number) => raw(`[${new Array(count).fill(itemText).join(',')}]`);
    if (field.maxItems !== undefined) add(`${where}: ${field.maxItems + 1} items (one past maxItems)`, items(field.maxItems + 1));
    // As many as fit in 1.5 MB (a body may be 2 MB): large, but within the size limit.
    add(`${where}: a large array within the body limit`, items(Math.max(1, Math.min(50_000, Math.floor(1_500_000 / (itemText.length + 1))))));
    add(`${where}: 50,000 zeros`, raw(`[${new Array(50_000).fill('0').join(',')}]`));
    add(`${where}: 150,000 zeros (past the body's value limit)`, raw(`[${new Array(150_000).fill('0').join(',')}]`));
  }
  if (nested) for (const [what, value] of WRONG_TYPES) add(`${where}: ${what}`, json(value));
  if (nested && field.fixed) add(`${where}: outside its set`, json('bogus'));
  if (nested && field.format === 'date-time') for (const date of HOSTILE_DATES) add(`${where}: date ${date}`, json(date));
  if (nested && field.format) add(`${where}: not a ${field.format}`, json('not-a-value'));
}
