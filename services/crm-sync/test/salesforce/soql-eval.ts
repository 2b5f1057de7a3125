// Compiles a parsed query against the org's schema into closures (filter, sort keys, projection)
// once per query, so a run is a single pass over the object's rows.
import { SalesforceApiError } from './errors';
import { normalizeId } from './ids';
import type { SalesforceOrg } from './org';
import type { FieldDef, ObjectDef } from './schema';
import { malformed } from './soql-lexer';
import { parseSoql, type Cond, type Literal, type SoqlAst } from './soql-parser';
import type { SObjectName } from './types';
import { isNumericKind, isTextKind, outValue, type Row } from './values';

export type Getter = (row: Row) => string | number | boolean | null | undefined;

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

export interface Projection {
  /** Tree of output keys: a field name → getter, or a relationship name → sub-tree. */
  tree: ProjNode;
  columns: { header: string; get: Getter; field: FieldDef }[];
}
export interface ProjNode {
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

export function renderRecord(org: SalesforceOrg, version: string, node: ProjNode, row: Row): Record<string, unknown> {
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
