// SOQL tokenizer: turns a query into tokens with positions, so errors can point at the
// column the way Salesforce's MALFORMED_QUERY answers do.
import { SalesforceApiError } from './errors';

export type TokKind = 'ident' | 'string' | 'number' | 'datetime' | 'date' | 'punct' | 'op' | 'eof';
export interface Token {
  kind: TokKind;
  text: string;
  value?: string | number;
  pos: number;
}

const DATETIME_RE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)/y;
const DATE_RE = /\d{4}-\d\d-\d\d/y;
const NUMBER_RE = /-?\d+(\.\d+)?/y;
const IDENT_RE = /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/y;

export function malformed(soql: string, pos: number, what: string): SalesforceApiError {
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
