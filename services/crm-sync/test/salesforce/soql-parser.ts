// Recursive-descent SOQL parser for the subset the connector uses (SELECT paths / COUNT(), FROM,
// WHERE with AND/OR/NOT, comparison, IN, LIKE, ORDER BY, LIMIT, OFFSET).
import type { SalesforceApiError } from './errors';
import { malformed, tokenize, type Token } from './soql-lexer';

export type Literal = { kind: 'string' | 'number' | 'datetime' | 'date' | 'boolean' | 'null'; value: string | number | boolean | null; pos: number };

export type Cond =
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
