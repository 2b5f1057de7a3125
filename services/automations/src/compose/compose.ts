// Builds a run's message: the view a template sees (figures formatted in the alert's currency and
// timezone), the template (the alert's, or the default for its trigger), the three renderings (email
// text and HTML, Slack mrkdwn), the link back to the API query, and the AI path with its fallback.
import { EVENT_CATALOG, eventFields, moneyFields, type CatalogType, type FieldValue } from '../spec/event-catalog';
import type { AutomationSpec, Condition } from '../spec/spec';
import type { Evaluation } from '../gather/condition';
import type { Figure } from '../gather/gather';
import { composeWithAi, type AiSettings } from './ai';
import { factsOf } from './facts';
import { formatInstant, formatMetric, formatMoney, formatNumber, formatPercent, formatWindow } from './format';
import { escapeSlack, htmlOf, MAX_SECTION_DEPTH, render, TemplateTooLargeError } from './render';

export type RunTrigger = 'event' | 'digest' | 'schedule' | 'threshold' | 'recovery' | 'manual';

export interface Message {
  subject: string;
  text: string;
  html: string;
  chat: string;
}

export interface ComposedMessage {
  message: Message;
  composedBy: 'template' | 'ai';
  /** What the run shows about how its message was written (or why it could not be). */
  note: string | null;
  /** The template could not be rendered: the run fails with `note` and nothing is sent. */
  failed: boolean;
  /** For the log only (a model's own error text is not shown to API keys). */
  diagnostic: string | null;
}

export interface ComposeAlert {
  id: string;
  name: string;
  spec: AutomationSpec;
  domain: string;
  timezone: string;
  currency: string;
}

export interface ComposeEvent {
  type: CatalogType;
  payload: unknown;
  occurredAt: string;
  /** The catalog's sample (a test run of an alert no event has matched yet). */
  sample?: boolean;
}

export interface ComposeInput {
  alert: ComposeAlert;
  trigger: RunTrigger;
  test: boolean;
  /** Event alerts (and a manual run of one): the event. */
  event?: ComposeEvent;
  /** Digests: the events of the period, and the period. */
  digest?: { events: ComposeEvent[]; from: string; to: string };
  figures?: Record<string, Figure>;
  /** Threshold alerts: where the condition stands. */
  evaluation?: Evaluation;
  link: string;
}

const DEFAULT_TEMPLATES: Record<'event' | 'digest' | 'schedule' | 'threshold' | 'recovery', string> = {
  event: '{{event.title}}\nWebsite: {{website.domain}}\nWhen: {{event.when}}\n{{#event.details}}{{.}}\n{{/event.details}}{{#figure_list}}{{label}}: {{value}}\n{{/figure_list}}',
  digest: '{{count}} {{#one}}event{{/one}}{{^one}}events{{/one}} for {{alert.name}} on {{website.domain}} ({{period}}, {{website.timezone}}):\n{{#events}}• {{title}} ({{when}})\n{{/events}}{{#more}}… and {{more}} more\n{{/more}}',
  schedule: '{{alert.name}}: {{website.domain}}\n{{#figure_list}}{{label}}: {{value}}{{#comparison}} ({{comparison}}){{/comparison}}\n{{/figure_list}}',
  threshold: '{{#condition.holds}}Alert{{/condition.holds}}{{^condition.holds}}No alert now{{/condition.holds}}: {{condition.text}}\n{{#figure_list}}{{label}}: {{value}}{{#previous}} (previous period {{previous}}){{/previous}}\n{{/figure_list}}',
  recovery: 'Back to normal: {{condition.text}}\n{{#figure_list}}{{label}}: {{value}}{{#previous}} (previous period {{previous}}){{/previous}}\n{{/figure_list}}',
};

/** Events a digest lists by name; the rest are counted. */
export const DIGEST_LISTED = 100;

const OP_WORDS: Record<Condition['op'], string> = { gt: 'above', gte: 'at or above', lt: 'below', lte: 'at or below' };

export function defaultTemplateFor(spec: AutomationSpec, trigger: RunTrigger): string {
  if (trigger === 'digest') return DEFAULT_TEMPLATES.digest;
  if (trigger === 'recovery') return DEFAULT_TEMPLATES.recovery;
  if (trigger === 'manual') return spec.trigger.kind === 'event' ? DEFAULT_TEMPLATES.event : DEFAULT_TEMPLATES[spec.trigger.kind];
  return DEFAULT_TEMPLATES[trigger];
}

function figureLabel(f: Figure): string {
  const what = f.metric === 'funnel_conversion' ? ', funnel conversion' : '';
  return `${f.name.replace(/_/g, ' ')} (${f.period}${what}${f.filters.length > 0 ? `, ${f.filters.join(', ')}` : ''})`;
}

function figureView(f: Figure, alert: ComposeAlert) {
  const previous = f.previous?.value ?? null;
  const change = previous !== null && previous !== 0 && f.value !== null ? ((f.value - previous) / Math.abs(previous)) * 100 : null;
  return {
    name: f.name,
    metric: f.metric,
    label: figureLabel(f),
    value: formatMetric(f.metric, f.value, alert.currency),
    raw: f.value,
    period: f.period,
    window: formatWindow(f.window.from, f.window.to, alert.timezone),
    previous: f.previous ? formatMetric(f.metric, previous, alert.currency) : null,
    previous_window: f.previous ? formatWindow(f.previous.window.from, f.previous.window.to, alert.timezone) : null,
    change: change === null ? null : formatPercent(change),
    change_percent: change === null ? null : formatNumber(change, 1),
    // "previous period €100.00, -20.0%", without a dangling comma when there is no change to state.
    comparison: f.previous ? [`previous period ${formatMetric(f.metric, previous, alert.currency)}`, change === null ? null : formatPercent(change)].filter((p) => p !== null).join(', ') : null,
  };
}

/** The condition in words, with the figures that decide it. */
export function conditionText(condition: Condition, figures: Record<string, Figure>, evaluation: Evaluation, alert: ComposeAlert): string {
  const f = figures[condition.figure];
  if (!f) return `${condition.figure}: not gathered`;
  const label = figureLabel(f);
  const value = formatMetric(f.metric, f.value, alert.currency);
  if ((condition.compare ?? 'value') === 'value') {
    return `${label} is ${value}, ${evaluation.holds ? '' : 'no longer '}${OP_WORDS[condition.op]} ${formatMetric(f.metric, condition.value, alert.currency)}`;
  }
  const previous = formatMetric(f.metric, f.previous?.value ?? null, alert.currency);
  if (evaluation.measured === null) return `${label} is ${value} (previous period ${previous}; ${evaluation.note ?? 'no comparison'})`;
  const percent = (condition.change ?? 'percent') === 'percent';
  const moved = percent ? formatPercent(evaluation.measured) : formatMetric(f.metric, evaluation.measured, alert.currency);
  const limit = percent ? formatPercent(condition.value) : formatMetric(f.metric, condition.value, alert.currency);
  return `${label} changed ${moved} against the previous period (${previous} → ${value}), ${evaluation.holds ? '' : 'no longer '}${OP_WORDS[condition.op]} ${limit}`;
}

function eventView(event: ComposeEvent, alert: ComposeAlert) {
  const entry = EVENT_CATALOG[event.type];
  const fields = eventFields(event.type, event.payload);
  let amount: string | null = null;
  if (entry.amount) {
    const value = fields[entry.amount.field];
    const currency = fields[entry.amount.currency];
    if (typeof value === 'number') amount = formatMoney(value, typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : alert.currency);
  }
  const headline = titleOf(event.type, fields);
  const money = new Set(moneyFields(event.type));
  const currencyOf = (): string => {
    const c = entry.amount ? fields[entry.amount.currency] : null;
    return typeof c === 'string' && /^[A-Z]{3}$/.test(c) ? c : alert.currency;
  };
  const details = Object.entries(fields)
    .filter(([name, v]) => v !== null && v !== '' && name !== entry.amount?.field && name !== entry.amount?.currency)
    .map(([name, v]) => `${name.replace(/_/g, ' ')}: ${money.has(name) && typeof v === 'number' ? formatMoney(v, currencyOf()) : String(v)}`);
  const occurredAt = formatInstant(event.occurredAt, alert.timezone);
  return {
    type: event.type,
    description: entry.description,
    ...fields,
    amount,
    occurred_at: occurredAt,
    // When it happened, in the website timezone (a backfilled conversion can be days old).
    when: `${occurredAt} (${alert.timezone})`,
    sample: event.sample === true,
    title: amount ? `${headline} (${amount})` : headline,
    details,
  };
}

function titleOf(type: CatalogType, f: Record<string, FieldValue>): string {
  switch (type) {
    case 'conversion.created': return `New conversion: ${String(f['event_type'])}${f['event_name'] ? ` "${String(f['event_name'])}"` : ''}`;
    case 'conversion.value_changed': return `Conversion value changed (${String(f['changed'])})`;
    case 'stage.changed': return `Contact stage changed${f['status'] ? ` to ${String(f['status'])}` : ''}`;
    case 'milestone.reached': return `Milestone reached: ${String(f['stage'])}`;
    case 'deal.created': return `New deal: ${String(f['name'])}`;
    case 'deal.stage_changed': return f['bucket'] === 'won' ? `Deal won: ${String(f['name'])}` : `Deal ${String(f['name'])} moved to ${String(f['stage_name'] ?? f['bucket'])}`;
  }
}

export function buildView(input: ComposeInput) {
  const { alert } = input;
  const figures = Object.values(input.figures ?? {}).map((f) => figureView(f, alert));
  const condition = alert.spec.condition && input.evaluation && input.figures
    ? { text: conditionText(alert.spec.condition, input.figures, input.evaluation, alert), holds: input.evaluation.holds }
    : null;
  // A digest lists its first DIGEST_LISTED events and counts the rest: a busy day stays one readable message.
  const digestEvents = input.digest?.events.slice(0, DIGEST_LISTED).map((e) => {
    const v = eventView(e, alert);
    return { title: v.title, when: v.occurred_at, type: e.type };
  });
  const count = input.digest?.events.length ?? 0;
  return {
    alert: { id: alert.id, name: alert.name },
    website: { domain: alert.domain, timezone: alert.timezone },
    trigger: input.trigger,
    test: input.test,
    event: input.event ? eventView(input.event, alert) : null,
    events: digestEvents ?? [],
    count,
    one: count === 1,
    more: count > DIGEST_LISTED ? count - DIGEST_LISTED : 0,
    period: input.digest ? formatWindow(input.digest.from, input.digest.to, alert.timezone) : null,
    figures: Object.fromEntries(figures.map((f) => [f.name, f])),
    figure_list: figures,
    condition,
    link: input.link,
  };
}

export type View = ReturnType<typeof buildView>;

export async function compose(input: ComposeInput, ai: AiSettings | null): Promise<ComposedMessage> {
  const view = buildView(input);
  try {
    return await composeView(input, view, ai);
  } catch (error) {
    // A stored template that repeats past the budget: the run fails and says what to change, and
    // nothing crashes or is retried (the same template would fail the same way).
    if (!(error instanceof TemplateTooLargeError)) throw error;
    const note = `not sent: ${error.message}. Nest fewer {{#sections}} (at most ${MAX_SECTION_DEPTH}) or repeat smaller lists, then PATCH the alert's compose.template or compose.subject.`;
    const text = `${input.alert.name}: ${note}`;
    return {
      message: { subject: `[Sightline] ${input.alert.name}`, text, html: htmlOf(text, input.link, input.alert.name), chat: escapeSlack(text) },
      composedBy: 'template', note, failed: true, diagnostic: null,
    };
  }
}

async function composeView(input: ComposeInput, view: View, ai: AiSettings | null): Promise<ComposedMessage> {
  const spec = input.alert.spec;
  const testLine = `${input.test ? 'This is a test message.\n' : ''}${view.event?.sample ? 'Sample event: no event has matched this alert yet.\n' : ''}`;
  const subjectTemplate = spec.compose?.subject ?? '{{alert.name}}';
  const subjectBody = render(subjectTemplate, view, 'text').replace(/\s+/g, ' ').trim() || input.alert.name;
  const subject = `${input.test ? '[TEST] ' : ''}${spec.compose?.subject ? '' : '[Sightline] '}${subjectBody}${input.trigger === 'recovery' && !spec.compose?.subject ? ': back to normal' : ''}`;
  const linkLine = (body: string, link: string): string => (body.includes(link) ? '' : `\nData: ${link}`);

  let note: string | null = null;
  let diagnostic: string | null = null;
  if (spec.compose?.ai && ai) {
    const outcome = await composeWithAi(ai, factsOf(view));
    if (outcome.ok) {
      // The model's words are text only: escaped for Slack and HTML like any value.
      const text = `${testLine}${outcome.text}\n${linkLine('', input.link).trim()}`;
      return {
        message: { subject, text, html: htmlOf(text, input.link, subject), chat: `${testLine}${escapeSlack(outcome.text)}\n<${input.link}|Data>` },
        composedBy: 'ai',
        note: null,
        failed: false,
        diagnostic: null,
      };
    }
    note = outcome.note;
    diagnostic = outcome.detail ?? null;
  } else if (spec.compose?.ai) {
    note = 'template used: no language model is configured any more';
  }

  const template = spec.compose?.template ?? defaultTemplateFor(spec, input.trigger);
  const textBody = render(template, view, 'text').trimEnd();
  const chatBody = render(template, view, 'slack').trimEnd();
  const text = `${testLine}${textBody}${linkLine(textBody, input.link)}`;
  const chat = `${testLine}${chatBody}${chatBody.includes(input.link) ? '' : `\n<${input.link}|Data>`}`;
  return { message: { subject, text, html: htmlOf(text, input.link, subject), chat }, composedBy: 'template', note, failed: false, diagnostic };
}
