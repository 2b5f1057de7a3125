// Templates are Mustache (logic-less: a template written through the API can read values but
// never run code). One template renders three ways: plain text (email text part, and the source
// of the HTML part, which escapes all of it), and Slack mrkdwn (values escaped as Slack's message
// formatting asks: &, < and >, so no value can mention @channel or smuggle a link).
//
// Sections repeat their contents once per list item and look names up through every enclosing
// item, so nested sections multiply: {{#a}}{{#a}}...{{/a}}{{/a}} over a 3-item list is 3^depth
// copies. Hence two bounds: at write time a template may nest at most MAX_SECTION_DEPTH sections,
// and at run time the renderer below (Mustache's parser, our own walk of its tokens) stops once it
// has written MAX_OUTPUT_CHARS or taken MAX_RENDER_STEPS steps, so any template, stored before
// the depth rule or not, costs bounded time and memory.
import Mustache from 'mustache';

export type RenderTarget = 'text' | 'slack';

const SLACK_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeSlack = (text: string): string => text.replace(/[&<>]/g, (c) => SLACK_ESCAPES[c] ?? c);
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/** Why a template does not parse, or null when it does. */
export function checkTemplate(template: string): string | null {
  try {
    Mustache.parse(template);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Sections nested in one another, at most (checked when a template is written). */
export const MAX_SECTION_DEPTH = 4;
/** Characters one rendering may write (64 KiB). */
export const MAX_OUTPUT_CHARS = 65_536;
/** Tokens visited plus section iterations, at most: bounds a rendering that writes nothing. */
export const MAX_RENDER_STEPS = 200_000;

type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** How deeply the template nests sections (`{{#x}}` and `{{^x}}`), walked without recursion. */
export function sectionDepth(template: string): number {
  let deepest = 0;
  const todo: { tokens: Token[]; depth: number }[] = [{ tokens: Mustache.parse(template) as unknown as Token[], depth: 0 }];
  for (let next = todo.pop(); next; next = todo.pop()) {
    deepest = Math.max(deepest, next.depth);
    for (const token of next.tokens) {
      if ((token[0] === '#' || token[0] === '^') && Array.isArray(token[4])) todo.push({ tokens: token[4], depth: next.depth + 1 });
    }
  }
  return deepest;
}

/** A rendering that ran past its budget: the template repeats too much for the data it was given. */
export class TemplateTooLargeError extends Error {
  constructor(readonly limit: 'output' | 'steps') {
    super(limit === 'output'
      ? `the message would be longer than ${MAX_OUTPUT_CHARS.toLocaleString('en-US')} characters`
      : `the template repeats its sections more than ${MAX_RENDER_STEPS.toLocaleString('en-US')} times`);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const has = (v: unknown, key: string): boolean => (isRecord(v) || typeof v === 'string') && Object.prototype.hasOwnProperty.call(v, key);

/**
 * Mustache's name lookup (the innermost context that has the name, dotted names walked from
 * there), reading own data properties only: no prototype members, no functions called.
 */
function lookup(stack: readonly unknown[], name: string): unknown {
  if (name === '.') return stack[stack.length - 1];
  const names = name.split('.');
  for (let i = stack.length - 1; i >= 0; i -= 1) {
    let value = stack[i];
    if (names.length === 1 && !isRecord(value)) continue;
    let hit = true;
    for (const n of names) {
      if (!has(value, n)) {
        hit = false;
        break;
      }
      value = (value as Record<string, unknown>)[n];
    }
    if (hit) return typeof value === 'function' ? undefined : value;
  }
  return undefined;
}

export function render(template: string, view: object, target: RenderTarget): string {
  const escape = target === 'slack' ? escapeSlack : (v: string) => v;
  const out: string[] = [];
  let chars = 0;
  let steps = 0;
  const write = (text: string): void => {
    chars += text.length;
    if (chars > MAX_OUTPUT_CHARS) throw new TemplateTooLargeError('output');
    out.push(text);
  };
  const step = (): void => {
    steps += 1;
    if (steps > MAX_RENDER_STEPS) throw new TemplateTooLargeError('steps');
  };
  // Recursion follows the template's nesting (a few hundred levels at most in 4,000 characters);
  // the budgets bound the work.
  const walk = (tokens: readonly Token[], stack: unknown[]): void => {
    for (const token of tokens) {
      step();
      const [kind, name] = token;
      if (kind === 'text') write(name);
      else if (kind === 'name' || kind === '&') {
        const value = lookup(stack, name);
        if (value !== null && value !== undefined) write(kind === 'name' ? escape(String(value)) : String(value));
      } else if (kind === '#') {
        const value = lookup(stack, name);
        const children = token[4] ?? [];
        if (Array.isArray(value)) {
          for (const item of value) {
            step();
            stack.push(item);
            walk(children, stack);
            stack.pop();
          }
        } else if (value === true) {
          walk(children, stack);
        } else if (value) {
          stack.push(value);
          walk(children, stack);
          stack.pop();
        }
      } else if (kind === '^') {
        const value = lookup(stack, name);
        if (!value || (Array.isArray(value) && value.length === 0)) walk(token[4] ?? [], stack);
      }
      // '!' comments, '=' delimiter changes (applied by the parser) and '>' partials (none) write nothing.
    }
  };
  walk(Mustache.parse(template) as unknown as Token[], [view]);
  return out.join('');
}

/** The HTML part of an email: the text part escaped, its lines kept, the link made clickable. */
export function htmlOf(text: string, link: string, title: string): string {
  const body = escapeHtml(text).replace(/\r?\n/g, '<br>\n');
  const anchored = body.split(escapeHtml(link)).join(`<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif">\n${anchored}\n</body></html>`;
}
