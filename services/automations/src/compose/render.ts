// Templates are Mustache (logic-less: a template written through the API can read values but
// never run code). One template renders three ways: plain text (email text part, and the source
// of the HTML part, which escapes all of it), and Slack mrkdwn (values escaped as Slack's message
// formatting asks: &, < and >, so no value can mention @channel or smuggle a link).
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

export function render(template: string, view: object, target: RenderTarget): string {
  // No partials: `{{> name}}` renders nothing.
  return Mustache.render(template, view, {}, { escape: target === 'slack' ? (v: unknown) => escapeSlack(String(v)) : (v: unknown) => String(v) });
}

/** The HTML part of an email: the text part escaped, its lines kept, the link made clickable. */
export function htmlOf(text: string, link: string, title: string): string {
  const body = escapeHtml(text).replace(/\r?\n/g, '<br>\n');
  const anchored = body.split(escapeHtml(link)).join(`<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif">\n${anchored}\n</body></html>`;
}
