// A spec validated as a whole, before anything is stored: each fault is a problem document of the
// right kind, with `allowed` where the value comes from a fixed set and a remediation that says
// what to write instead. Checks that need other systems (the chat workspace's channels, a dry run
// of the gather queries) follow in alerts/spec-checks.ts.
import { ProblemError } from '@sightline/kit';
import { resolveWindow } from '@sightline/periods';
import {
  AUTOMATION_FILTER_OPS, AUTOMATION_TRIGGER_KINDS, CONDITION_CHANGES, CONDITION_COMPARES, CONDITION_OPS, DELIVERY_CHANNELS, DIMENSIONS,
  FILTER_DIMENSIONS, METRICS, PACING_MODES, type DimensionDefinition, type MetricName,
} from '@sightline/proto-schemas';
import { checkEmailRecipient } from '../deliver/recipients';
import { checkCron } from './cron';
import { CATALOG_TYPES, fieldNames, fieldTypeOf, isCatalogType, type CatalogType } from './event-catalog';
import { durationMs, MAX_AGE_LIMIT_MS, type AutomationSpec, type Condition, type Destination, type EventFilter, type GatherQuery, type Trigger } from './spec';
import { checkTemplate, MAX_SECTION_DEPTH, sectionDepth } from '../compose/render';

export const MAX_GATHER = 10;
export const MAX_RECIPIENTS_PER_DESTINATION = 50;
const GATHER_NAME = /^[a-z][a-z0-9_]{0,39}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@<>(),;:"\[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
/** Slack conversation ids: C (public), G (private / legacy group), D (direct message). */
export const SLACK_CHANNEL_ID = /^[CGD][A-Z0-9]{8,}$/;
const SINGLE_VALUE_OPS = new Set(['eq', 'ne', 'contains', 'not_contains', 'gt', 'gte', 'lt', 'lte']);
const NUMERIC_OPS = new Set(['gt', 'gte', 'lt', 'lte']);
const TEXT_OPS = new Set(['contains', 'not_contains']);
/** Metrics an alert can gather: window totals that need no group_by and no stages. */
export const GATHERABLE_METRICS: MetricName[] = METRICS.filter((m) => m.requires === null).map((m) => m.name);
const DIMENSION_BY_NAME = new Map<string, DimensionDefinition>(DIMENSIONS.map((d) => [d.name, d]));

export interface ValidationContext {
  /** The website timezone: crons and periods are read in it. */
  timezone: string;
  now: Date;
  /** True when the operator configured a language model (compose.ai). */
  aiConfigured: boolean;
  /** The operator's allow-list of recipient email domains (deliver/recipients.ts); null or absent: any domain. */
  emailDomains?: readonly string[] | null;
}

const invalid = (detail: string, remediation: string, allowed?: readonly string[]): ProblemError =>
  new ProblemError('invalid-request', { detail, remediation, ...(allowed ? { allowed } : {}) });
const unsupported = (detail: string, remediation: string): ProblemError => new ProblemError('unsupported-combination', { detail, remediation });

/** "An event alert", "A schedule alert": the article goes by the noun's sound. */
export const anAlert = (kind: string): string => `${/^[aeiou]/i.test(kind) ? 'An' : 'A'} ${kind} alert`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function only(obj: Record<string, unknown>, where: string, keys: readonly string[]): void {
  const extra = Object.keys(obj).find((k) => !keys.includes(k));
  if (extra !== undefined) throw invalid(`${where}.${extra} is not a field of ${where}.`, `Remove ${where}.${extra}.`, keys);
}

export function validateSpec(raw: unknown, ctx: ValidationContext): AutomationSpec {
  if (!isObject(raw)) throw invalid('spec must be an object.', 'Send the spec as a JSON object with version, trigger and deliver.');
  only(raw, 'spec', ['version', 'trigger', 'filters', 'max_age', 'gather', 'condition', 'compose', 'deliver', 'pacing']);
  if (raw['version'] !== 1) throw invalid(`spec.version ${JSON.stringify(raw['version'] ?? null)} is not supported.`, 'Set spec.version to 1.', ['1']);
  const trigger = readTrigger(raw['trigger'], ctx);
  const filters = raw['filters'] === undefined ? undefined : readFilters(raw['filters'], trigger);
  const maxAge = raw['max_age'] === undefined ? undefined : readMaxAge(raw['max_age'], trigger);
  const gather = raw['gather'] === undefined ? undefined : readGather(raw['gather'], ctx);
  if (raw['condition'] !== undefined && trigger.kind !== 'threshold') {
    throw unsupported(`${anAlert(trigger.kind)} has no condition; only threshold alerts compare a number.`, 'Remove condition, or use trigger.kind threshold with a cron.');
  }
  const condition = raw['condition'] === undefined ? undefined : readCondition(raw['condition'], gather);
  const compose = raw['compose'] === undefined ? undefined : readCompose(raw['compose'], ctx);
  const deliver = readDeliver(raw['deliver'], ctx);
  const pacing = raw['pacing'] === undefined ? undefined : readPacing(raw['pacing']);

  if (trigger.kind === 'threshold') {
    if (!gather || Object.keys(gather).length === 0) {
      throw invalid('A threshold alert needs gather: the numbers its condition watches.', 'Add gather, e.g. {"conversions": {"metric": "conversions", "period": "last 7 days"}}.');
    }
    if (!condition) {
      throw invalid('A threshold alert needs a condition.', 'Add condition, e.g. {"figure": "conversions", "op": "lt", "value": 10}.');
    }
    if (pacing && pacing.mode !== 'each') {
      throw unsupported(`pacing ${pacing.mode} does not apply to a threshold alert: it sends only when its condition starts and stops to hold.`, 'Use pacing each, or leave pacing out.');
    }
  }
  if (filters && trigger.kind !== 'event') {
    throw unsupported('filters apply to the events of an event alert.', 'Remove filters, or filter the gathered numbers with gather.<name>.filters.');
  }
  return {
    version: 1,
    trigger,
    ...(filters && filters.length > 0 ? { filters } : {}),
    ...(maxAge !== undefined ? { max_age: maxAge } : {}),
    ...(gather && Object.keys(gather).length > 0 ? { gather } : {}),
    ...(condition ? { condition } : {}),
    ...(compose ? { compose } : {}),
    deliver,
    pacing: pacing ?? { mode: 'each' },
  };
}

function readTrigger(raw: unknown, ctx: ValidationContext): Trigger {
  if (!isObject(raw)) throw invalid('spec.trigger is required: an object with kind.', 'Add trigger, e.g. {"kind": "event", "events": ["conversion.created"]}.');
  only(raw, 'trigger', ['kind', 'events', 'cron']);
  const kind = raw['kind'];
  if (typeof kind !== 'string' || !(AUTOMATION_TRIGGER_KINDS as readonly string[]).includes(kind)) {
    throw invalid(`trigger.kind ${JSON.stringify(kind ?? null)} is not a trigger kind.`, 'Use one of the allowed kinds.', AUTOMATION_TRIGGER_KINDS);
  }
  if (kind === 'event') {
    if (raw['cron'] !== undefined) throw unsupported('An event alert runs when its events arrive; it takes no cron.', 'Remove trigger.cron, or use kind schedule.');
    const events = raw['events'];
    if (!isStringArray(events) || events.length === 0) {
      throw invalid('An event alert needs trigger.events: event types from the catalog.', 'Name at least one event type (GET /automations meta.event_catalog).', CATALOG_TYPES);
    }
    const unknown = events.find((e) => !isCatalogType(e));
    if (unknown !== undefined) throw invalid(`${JSON.stringify(unknown)} is not an event type of the catalog.`, 'Use event types listed in allowed.', CATALOG_TYPES);
    return { kind, events: [...new Set(events)] };
  }
  if (raw['events'] !== undefined) throw unsupported(`${anAlert(kind)} runs on its cron; it takes no events.`, 'Remove trigger.events, or use kind event.');
  const cron = raw['cron'];
  if (typeof cron !== 'string' || cron.trim() === '') {
    throw invalid(`${anAlert(kind)} needs trigger.cron.`, 'Add a cron in the website timezone, e.g. "0 8 * * *" for 08:00 every day.');
  }
  const check = checkCron(cron, ctx.timezone, ctx.now);
  if (!check.ok) throw invalid(`trigger.cron ${JSON.stringify(cron)} cannot be used: ${check.reason}.`, 'Write a cron that fires, e.g. "0 8 * * 1" for Mondays at 08:00 (website timezone).');
  return { kind: kind as 'schedule' | 'threshold', cron: cron.trim().replace(/\s+/g, ' ') };
}

function readFilters(raw: unknown, trigger: Trigger): EventFilter[] {
  if (!Array.isArray(raw)) throw invalid('spec.filters must be an array of {field, op, values}.', 'Send filters as an array.');
  if (raw.length > 20) throw invalid(`spec.filters has ${raw.length} filters; at most 20 are allowed.`, 'Use at most 20 filters.');
  if (trigger.kind !== 'event') return [];
  const types = trigger.events as CatalogType[];
  return raw.map((item, i) => {
    if (!isObject(item)) throw invalid(`spec.filters[${i}] must be an object {field, op, values}.`, 'Write each filter as {"field": ..., "op": ..., "values": [...]}.');
    only(item, `filters[${i}]`, ['field', 'op', 'values']);
    const { field, op, values } = item;
    // The field must exist on every event type the alert listens to, or the filter could never hold for some.
    const shared = types.map((t) => fieldNames(t)).reduce((a, b) => a.filter((n) => b.includes(n)));
    if (typeof field !== 'string' || types.some((t) => fieldTypeOf(t, field) === null)) {
      throw invalid(`filters[${i}].field ${JSON.stringify(field ?? null)} is not a field of ${types.join(' and ')}.`, 'Use a field the event types share (meta.event_catalog lists each type\'s fields).', [...shared, ...(types.every((t) => t === 'conversion.created') ? ['properties.<key>'] : [])]);
    }
    if (typeof op !== 'string' || !(AUTOMATION_FILTER_OPS as readonly string[]).includes(op)) {
      throw new ProblemError('unknown-filter-operator', { detail: `filters[${i}].op ${JSON.stringify(op ?? null)} is not a filter operator.`, remediation: 'Use one of the allowed operators.', allowed: AUTOMATION_FILTER_OPS });
    }
    const fieldType = fieldTypeOf(types[0] as CatalogType, field);
    const allowedOps = fieldType === 'number' ? ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte'] : fieldType === 'boolean' ? ['eq', 'ne'] : fieldType === 'any' ? [...AUTOMATION_FILTER_OPS] : ['eq', 'ne', 'in', 'nin', 'contains', 'not_contains'];
    if (!allowedOps.includes(op)) {
      throw new ProblemError('unknown-filter-operator', { detail: `The operator ${op} does not apply to ${field} (a ${fieldType} field).`, remediation: `Use an operator allowed for ${field}.`, allowed: allowedOps });
    }
    if (!isStringArray(values) || values.length === 0) throw invalid(`filters[${i}].values must be a non-empty array of strings.`, 'Give the value(s) as strings, e.g. ["purchase"].');
    if (SINGLE_VALUE_OPS.has(op) && values.length !== 1) throw invalid(`filters[${i}]: ${op} takes exactly one value; got ${values.length}.`, `Give one value, or use in / nin for several.`);
    if ((NUMERIC_OPS.has(op) || fieldType === 'number') && values.some((v) => !Number.isFinite(Number(v)) || v.trim() === '')) {
      throw invalid(`filters[${i}]: ${field} ${op} needs numbers; got ${JSON.stringify(values)}.`, 'Write the number as a string, e.g. ["100"].');
    }
    if (TEXT_OPS.has(op) && values[0] === '') throw invalid(`filters[${i}]: ${op} needs a non-empty value.`, 'Give the text to look for.');
    return { field, op: op as EventFilter['op'], values };
  });
}

/** spec.max_age: "90m", "24h", "7d" (1 minute to 365 days). */
function readMaxAge(raw: unknown, trigger: Trigger): string {
  if (trigger.kind !== 'event') throw unsupported(`max_age skips old events; ${anAlert(trigger.kind).toLowerCase()} has none.`, 'Remove max_age, or use trigger.kind event.');
  const ms = typeof raw === 'string' ? durationMs(raw) : null;
  if (ms === null || ms < 60_000 || ms > MAX_AGE_LIMIT_MS) {
    throw invalid(
      `spec.max_age ${JSON.stringify(raw)} is not a duration from 1 minute to 365 days.`,
      'Write a whole number and a unit: m (minutes), h (hours) or d (days), e.g. "90m", "24h" or "7d".',
    );
  }
  return (raw as string).replace(/\s+/g, '');
}

function readGather(raw: unknown, ctx: ValidationContext): Record<string, GatherQuery> {
  if (!isObject(raw)) throw invalid('spec.gather must be an object of named queries.', 'Write gather as {"name": {"metric": ..., "period": ...}}.');
  const names = Object.keys(raw);
  if (names.length > MAX_GATHER) throw invalid(`spec.gather names ${names.length} numbers; at most ${MAX_GATHER} are allowed.`, `Gather at most ${MAX_GATHER} numbers.`);
  const out: Record<string, GatherQuery> = {};
  for (const name of names) {
    if (!GATHER_NAME.test(name)) throw invalid(`gather name ${JSON.stringify(name)} is not usable in templates.`, 'Name each number with lower-case letters, digits and _, starting with a letter (at most 40).');
    const q = raw[name];
    if (!isObject(q)) throw invalid(`gather.${name} must be an object {metric, period, filters} or {funnel, period}.`, 'Write e.g. {"metric": "revenue", "period": "last 7 days"}.');
    if (q['funnel'] !== undefined) {
      only(q, `gather.${name}`, ['funnel', 'period']);
      const funnel = q['funnel'];
      if (typeof funnel !== 'string' || !UUID.test(funnel)) throw invalid(`gather.${name}.funnel must be the id of a funnel of this website.`, 'Use an id from GET /funnels.');
      const period = readPeriod(q['period'], name, ctx);
      out[name] = { funnel: funnel.toLowerCase(), ...(period !== undefined ? { period } : {}) };
      continue;
    }
    only(q, `gather.${name}`, ['metric', 'period', 'filters']);
    const metric = q['metric'];
    if (typeof metric !== 'string' || !(GATHERABLE_METRICS as readonly string[]).includes(metric)) {
      const known = METRICS.some((m) => m.name === metric);
      throw known
        ? unsupported(`gather.${name}: ${String(metric)} needs a breakdown (group_by or stages), so it has no single number to watch.`, 'Gather one of the allowed metrics.')
        : new ProblemError('unknown-metric', { detail: `gather.${name}.metric ${JSON.stringify(metric ?? null)} is not a metric.`, remediation: 'Use one of the allowed metrics (GET /schema describes each).', allowed: GATHERABLE_METRICS });
    }
    const period = readPeriod(q['period'], name, ctx);
    const filters = q['filters'] === undefined ? undefined : readGatherFilters(q['filters'], name);
    out[name] = { metric: metric as MetricName, ...(period !== undefined ? { period } : {}), ...(filters && filters.length > 0 ? { filters } : {}) };
  }
  return out;
}

function readPeriod(period: unknown, name: string, ctx: ValidationContext): string | undefined {
  if (period === undefined) return undefined;
  if (typeof period !== 'string' || period.trim() === '') throw invalid(`gather.${name}.period must be a non-empty string.`, 'Write a period such as "last 7 days" or "yesterday".');
  // Resolved now to refuse what can never be read; resolved again at each run.
  resolveWindow({ period, timezone: ctx.timezone, now: ctx.now });
  return period.trim();
}

function readGatherFilters(raw: unknown, name: string): GatherQuery['filters'] {
  if (!Array.isArray(raw) || raw.length > 10) throw invalid(`gather.${name}.filters must be an array of at most 10 {field, op, values}.`, 'Write filters as [{"field": "channel", "op": "eq", "values": ["Paid Search"]}].');
  return raw.map((item, i) => {
    const where = `gather.${name}.filters[${i}]`;
    if (!isObject(item)) throw invalid(`${where} must be an object {field, op, values}.`, 'Write e.g. {"field": "channel", "op": "eq", "values": ["Paid Search"]}.');
    only(item, where, ['field', 'op', 'values']);
    const { field, op, values } = item;
    const def = typeof field === 'string' ? DIMENSION_BY_NAME.get(field) : undefined;
    if (!def || !def.filterable) {
      throw new ProblemError('unknown-dimension', { detail: `${where}.field ${JSON.stringify(field ?? null)} is not a filterable dimension.`, remediation: 'Use one of the filterable dimensions (GET /schema).', allowed: FILTER_DIMENSIONS });
    }
    if (typeof op !== 'string' || !(def.operators as readonly string[]).includes(op)) {
      throw new ProblemError('unknown-filter-operator', { detail: `${where}.op ${JSON.stringify(op ?? null)} is not supported for ${def.name}.`, remediation: `Use an operator allowed for ${def.name}.`, allowed: def.operators });
    }
    if (!isStringArray(values) || values.length === 0 || values.some((v) => v === '' || v.includes('|'))) {
      throw invalid(`${where}.values must be non-empty strings without "|".`, 'Give each value as its own string.');
    }
    if (!['in', 'nin'].includes(op) && values.length !== 1) throw invalid(`${where}: ${op} takes exactly one value.`, 'Give one value, or use in / nin for several.');
    if (def.values) {
      const bad = values.find((v) => !(def.values as readonly string[]).includes(v));
      if (bad !== undefined) throw invalid(`${JSON.stringify(bad)} is not a value of ${def.name}.`, `Filter ${def.name} by one of the allowed values.`, def.values);
    }
    return { field: def.name, op, values };
  });
}

function readCondition(raw: unknown, gather: Record<string, GatherQuery> | undefined): Condition {
  if (!isObject(raw)) throw invalid('spec.condition must be an object {figure, op, value}.', 'Write e.g. {"figure": "conversions", "op": "lt", "value": 10}.');
  only(raw, 'condition', ['figure', 'op', 'value', 'compare', 'change']);
  const names = Object.keys(gather ?? {});
  const { figure, op, value } = raw;
  if (typeof figure !== 'string' || !names.includes(figure)) {
    throw invalid(`condition.figure ${JSON.stringify(figure ?? null)} names no gathered number.`, names.length > 0 ? 'Name one of the numbers in gather.' : 'Add the number to gather first.', names);
  }
  if (typeof op !== 'string' || !(CONDITION_OPS as readonly string[]).includes(op)) throw invalid(`condition.op ${JSON.stringify(op ?? null)} is not a comparison.`, 'Use one of the allowed comparisons.', CONDITION_OPS);
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid('condition.value must be a number.', 'Give the threshold as a number, e.g. 10 or -20 (per cent).');
  const compare = raw['compare'] ?? 'value';
  if (typeof compare !== 'string' || !(CONDITION_COMPARES as readonly string[]).includes(compare)) throw invalid(`condition.compare ${JSON.stringify(compare)} is not known.`, 'Use one of the allowed values.', CONDITION_COMPARES);
  const change = raw['change'];
  if (change !== undefined) {
    if (compare !== 'previous_period') throw unsupported('condition.change applies only when compare is previous_period.', 'Remove change, or set compare to previous_period.');
    if (typeof change !== 'string' || !(CONDITION_CHANGES as readonly string[]).includes(change)) throw invalid(`condition.change ${JSON.stringify(change)} is not known.`, 'Use one of the allowed values.', CONDITION_CHANGES);
  }
  return {
    figure, op: op as Condition['op'], value, compare: compare as 'value' | 'previous_period',
    ...(compare === 'previous_period' ? { change: (change ?? 'percent') as 'absolute' | 'percent' } : {}),
  };
}

function readCompose(raw: unknown, ctx: ValidationContext): NonNullable<AutomationSpec['compose']> {
  if (!isObject(raw)) throw invalid('spec.compose must be an object {template, subject, ai}.', 'Write e.g. {"template": "{{event.event_name}}: {{event.amount}}"}.');
  only(raw, 'compose', ['template', 'subject', 'ai']);
  const out: NonNullable<AutomationSpec['compose']> = {};
  for (const key of ['template', 'subject'] as const) {
    const v = raw[key];
    if (v === undefined) continue;
    const max = key === 'template' ? 4000 : 200;
    if (typeof v !== 'string' || v.length > max) throw invalid(`compose.${key} must be a string of at most ${max} characters.`, `Shorten compose.${key}.`);
    const fault = checkTemplate(v);
    if (fault) throw invalid(`compose.${key} is not a valid Mustache template: ${fault}.`, 'Close every {{#section}} with {{/section}} and every {{ with }}.');
    // Nested sections multiply (each repeats once per list item): bounded before anything is stored.
    const depth = sectionDepth(v);
    if (depth > MAX_SECTION_DEPTH) {
      throw invalid(
        `compose.${key} nests sections ${depth} deep; at most ${MAX_SECTION_DEPTH} are allowed (each section repeats what it holds once per list item).`,
        `Nest at most ${MAX_SECTION_DEPTH} {{#section}}s inside one another; close a section before opening the next where you can.`,
      );
    }
    out[key] = v;
  }
  const ai = raw['ai'];
  if (ai !== undefined && typeof ai !== 'boolean') throw invalid('compose.ai must be true or false.', 'Send compose.ai as a boolean.');
  if (ai === true) {
    if (!ctx.aiConfigured) {
      throw invalid('compose.ai is true but this Sightline has no language model configured.', 'Ask the operator to set SIGHTLINE_LLM_URL and SIGHTLINE_LLM_MODEL (an OpenAI-compatible endpoint), or set compose.ai to false to use the template.');
    }
    out.ai = true;
  }
  return out;
}

function readDeliver(raw: unknown, ctx: ValidationContext): Destination[] {
  if (!Array.isArray(raw) || raw.length === 0) throw invalid('spec.deliver needs at least one destination {channel, to}.', 'Add e.g. {"channel": "email", "to": ["team@example.com"]}.');
  if (raw.length > 10) throw invalid(`spec.deliver has ${raw.length} destinations; at most 10 are allowed.`, 'Merge the recipients of one channel into one destination.');
  const byChannel = new Map<Destination['channel'], string[]>();
  raw.forEach((item, i) => {
    if (!isObject(item)) throw invalid(`deliver[${i}] must be an object {channel, to}.`, 'Write e.g. {"channel": "chat", "to": ["C0123456789"]}.');
    only(item, `deliver[${i}]`, ['channel', 'to']);
    const { channel, to } = item;
    if (typeof channel !== 'string' || !(DELIVERY_CHANNELS as readonly string[]).includes(channel)) {
      throw invalid(`deliver[${i}].channel ${JSON.stringify(channel ?? null)} is not a delivery channel.`, 'Use one of the allowed channels.', DELIVERY_CHANNELS);
    }
    if (!isStringArray(to) || to.length === 0) throw invalid(`deliver[${i}].to must be a non-empty array of recipients.`, channel === 'email' ? 'List email addresses.' : 'List Slack channel ids (C…).');
    for (const r of to) {
      if (channel === 'email' && (r.length > 254 || !EMAIL.test(r))) throw invalid(`deliver[${i}]: ${JSON.stringify(r)} is not an email address.`, 'Give addresses as name@domain.');
      if (channel === 'email') checkEmailRecipient(r, i, ctx.emailDomains);
      if (channel === 'chat' && !SLACK_CHANNEL_ID.test(r)) {
        throw invalid(`deliver[${i}]: ${JSON.stringify(r)} is not a Slack channel id.`, 'Give the channel id (C… or G…; in Slack: channel details, at the bottom), not its #name.');
      }
    }
    const list = byChannel.get(channel as Destination['channel']) ?? [];
    byChannel.set(channel as Destination['channel'], [...list, ...to.map((r) => (channel === 'email' ? r.trim().toLowerCase() : r))]);
  });
  return [...byChannel].map(([channel, to]) => {
    const unique = [...new Set(to)];
    if (unique.length > MAX_RECIPIENTS_PER_DESTINATION) throw invalid(`${unique.length} ${channel} recipients; at most ${MAX_RECIPIENTS_PER_DESTINATION} per channel.`, 'Use a mailing list or a channel for larger audiences.');
    return { channel, to: unique };
  });
}

function readPacing(raw: unknown): { mode: (typeof PACING_MODES)[number] } {
  if (!isObject(raw)) throw invalid('spec.pacing must be an object {mode}.', 'Write e.g. {"mode": "each"}.');
  only(raw, 'pacing', ['mode']);
  const mode = raw['mode'];
  if (typeof mode !== 'string' || !(PACING_MODES as readonly string[]).includes(mode)) throw invalid(`pacing.mode ${JSON.stringify(mode ?? null)} is not a pacing mode.`, 'Use one of the allowed modes.', PACING_MODES);
  return { mode: mode as (typeof PACING_MODES)[number] };
}
