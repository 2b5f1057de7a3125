// A funnel definition as stored and returned, and the rules that decide whether one can be stored.
// The gateway has already checked the body against the OpenAPI schema; these rules are the ones a
// schema cannot state: a matcher that can never match, combinations that would count nobody.
import { ProblemError } from '@sightline/kit';
import {
  FUNNEL_BEHAVIOURAL_CONDITIONS,
  FUNNEL_FILTER_DIMENSIONS,
  FUNNEL_KNOWN_EVENT_TYPES,
  FUNNEL_MATCHER,
  FUNNEL_NO_CLICK_TEXT_EVENT_TYPES,
  FUNNEL_SCOPES,
  FUNNEL_STEP_ORDERS,
  FUNNEL_STEPS,
  FUNNEL_UNNAMED_EVENT_TYPES,
  FUNNEL_WINDOW_DAYS,
  MAX_CUSTOM_EVENT_TYPES,
  REVENUE_EVENTS,
  type FunnelField,
} from '@sightline/proto-schemas';
import { canStartWith, globMatches, literalLength, literalPrefix } from './glob';

export type FunnelScope = (typeof FUNNEL_SCOPES)[number];
export type StepOrder = (typeof FUNNEL_STEP_ORDERS)[number];
export type RevenueEvent = (typeof REVENUE_EVENTS)[number];
export type Matcher = (typeof FUNNEL_BEHAVIOURAL_CONDITIONS)[number];
export type FilterDimension = (typeof FUNNEL_FILTER_DIMENSIONS)[number];

export type BehaviouralConditions = Partial<Record<Matcher, string>>;
export interface RevenueConditions {
  source: 'revenue';
  revenue_event: RevenueEvent;
}

export interface FunnelStep {
  name: string;
  conditions: BehaviouralConditions | RevenueConditions;
}

export type FilterValue = string | boolean;

export interface FunnelDefinition {
  name: string;
  scope: FunnelScope;
  step_order: StepOrder;
  window_days: number;
  filters: Partial<Record<FilterDimension, FilterValue>>;
  steps: FunnelStep[];
}

/** The longest event name ingest keeps (tracker names are cut there, POST /events refuses longer). */
export const MAX_EVENT_NAME_LENGTH = 200;
/** Paths are stored without query string or fragment. */
const PATH_FORBIDDEN = ['?', '#'];
const URL_SCHEMES = ['http://', 'https://'];

export function isRevenueStep(step: FunnelStep): step is FunnelStep & { conditions: RevenueConditions } {
  return (step.conditions as Partial<RevenueConditions>).source === 'revenue';
}

export const FIELDS: readonly FunnelField[] = ['name', 'scope', 'step_order', 'window_days', 'filters', 'steps'];

const invalid = (detail: string, remediation: string, allowed?: readonly string[]): ProblemError =>
  new ProblemError('invalid-request', { detail, remediation, ...(allowed ? { allowed } : {}) });

/** The most event types an error lists (the catalog can hold about a thousand). */
export const MAX_LISTED_EVENT_TYPES = 100;

/** Refusal whose `allowed` is event types: the first MAX_LISTED_EVENT_TYPES, and how many more. */
const invalidType = (detail: string, remediation: string, types: readonly string[]): ProblemError => {
  const more = types.length - MAX_LISTED_EVENT_TYPES;
  const note = more > 0 ? ` \`allowed\` lists the first ${MAX_LISTED_EVENT_TYPES} of the website's ${types.length} event types (${more} more not shown).` : '';
  return invalid(`${detail}${note}`, remediation, types.slice(0, MAX_LISTED_EVENT_TYPES));
};

const unsupported = (detail: string, remediation: string, allowed?: readonly string[]): ProblemError =>
  new ProblemError('unsupported-combination', { detail, remediation, ...(allowed ? { allowed } : {}) });

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The definition fields of a body, typed; anything the schema would refuse is refused here too. */
export function readFields(body: unknown, partial: boolean): Partial<FunnelDefinition> {
  if (!isObject(body)) throw invalid('The body must be a JSON object.', 'Send the funnel definition as a JSON object.');
  const unknown = Object.keys(body).filter((k) => !(FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) throw invalid(`Body field "${unknown[0]}" is not accepted.`, 'Send only the funnel definition fields.', FIELDS);
  if (partial && Object.keys(body).length === 0) throw invalid('The body changes nothing.', 'Send at least one of the definition fields.', FIELDS);
  const out: Partial<FunnelDefinition> = {};
  if (body['name'] !== undefined) {
    if (typeof body['name'] !== 'string' || body['name'].trim() === '' || body['name'].length > 200) throw invalid('Body field "name" must be text of 1 to 200 characters.', 'Give the funnel a short name, or leave it out.');
    out.name = body['name'].trim();
  }
  if (body['scope'] !== undefined) {
    if (!(FUNNEL_SCOPES as readonly unknown[]).includes(body['scope'])) throw invalid('Body field "scope" is not a scope.', 'Use one of the allowed values for "scope".', FUNNEL_SCOPES);
    out.scope = body['scope'] as FunnelScope;
  }
  if (body['step_order'] !== undefined) {
    if (!(FUNNEL_STEP_ORDERS as readonly unknown[]).includes(body['step_order'])) throw invalid('Body field "step_order" is not a step order.', 'Use one of the allowed values for "step_order".', FUNNEL_STEP_ORDERS);
    out.step_order = body['step_order'] as StepOrder;
  }
  if (body['window_days'] !== undefined) {
    const days = body['window_days'];
    if (typeof days !== 'number' || !Number.isInteger(days) || days < FUNNEL_WINDOW_DAYS.minimum || days > FUNNEL_WINDOW_DAYS.maximum) {
      throw invalid(`Body field "window_days" must be a whole number from ${FUNNEL_WINDOW_DAYS.minimum} to ${FUNNEL_WINDOW_DAYS.maximum}.`, `Give window_days between ${FUNNEL_WINDOW_DAYS.minimum} and ${FUNNEL_WINDOW_DAYS.maximum}.`);
    }
    out.window_days = days;
  }
  if (body['filters'] !== undefined) out.filters = readFilters(body['filters']);
  if (body['steps'] !== undefined) out.steps = readSteps(body['steps']);
  return out;
}

function readFilters(value: unknown): FunnelDefinition['filters'] {
  if (!isObject(value)) throw invalid('Body field "filters" must be an object of dimension to value.', 'Send filters as {"country": "DE"}, or leave them out.');
  const out: FunnelDefinition['filters'] = {};
  for (const [name, raw] of Object.entries(value)) {
    if (!(FUNNEL_FILTER_DIMENSIONS as readonly string[]).includes(name)) {
      throw invalid(`Filter dimension "${name}" cannot select a funnel's audience.`, 'Filter on one of the allowed dimensions (attributes of the entering event and its session, or identified).', FUNNEL_FILTER_DIMENSIONS);
    }
    const dimension = name as FilterDimension;
    if (dimension === 'identified') {
      if (raw === true || raw === 'true') out.identified = true;
      else if (raw === false || raw === 'false') out.identified = false;
      else throw invalid('Filter "identified" takes true or false.', 'Send "identified": true or false.', ['true', 'false']);
      continue;
    }
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
      throw invalid(`Filter "${name}" must be a string, number or boolean.`, `Send the value "${name}" must equal.`);
    }
    out[dimension] = String(raw);
  }
  return out;
}

function readSteps(value: unknown): FunnelStep[] {
  if (!Array.isArray(value) || value.length < FUNNEL_STEPS.minimum || value.length > FUNNEL_STEPS.maximum) {
    throw invalid(`Body field "steps" must hold ${FUNNEL_STEPS.minimum} to ${FUNNEL_STEPS.maximum} steps.`, `Define between ${FUNNEL_STEPS.minimum} and ${FUNNEL_STEPS.maximum} steps.`);
  }
  return value.map((raw, index) => {
    const where = `Step ${index + 1}`;
    if (!isObject(raw) || typeof raw['name'] !== 'string' || raw['name'].trim() === '' || raw['name'].length > 200 || !isObject(raw['conditions'])) {
      throw invalid(`${where} needs a name (1 to 200 characters) and a conditions object.`, 'Give every step {"name": ..., "conditions": {...}}.');
    }
    const extra = Object.keys(raw).filter((k) => k !== 'name' && k !== 'conditions');
    if (extra.length > 0) throw invalid(`${where}: field "${extra[0]}" is not accepted.`, 'A step has only name and conditions.', ['name', 'conditions']);
    return { name: raw['name'].trim(), conditions: readConditions(raw['conditions'], where) };
  });
}

const CONDITION_KEYS = [...FUNNEL_BEHAVIOURAL_CONDITIONS, 'source', 'revenue_event'] as const;

function readConditions(value: Json, where: string): FunnelStep['conditions'] {
  const keys = Object.keys(value);
  const unknown = keys.filter((k) => !(CONDITION_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) throw invalid(`${where}: condition "${unknown[0]}" does not exist.`, 'Use the behavioural matchers, or source and revenue_event for a revenue step.', CONDITION_KEYS);
  const behavioural = keys.filter((k) => (FUNNEL_BEHAVIOURAL_CONDITIONS as readonly string[]).includes(k)) as Matcher[];
  if (value['source'] !== undefined || value['revenue_event'] !== undefined) {
    if (value['source'] !== 'revenue') throw invalid(`${where}: a revenue step needs "source": "revenue".`, 'Add "source": "revenue" next to revenue_event.', ['revenue']);
    if (behavioural.length > 0) {
      throw invalid(`${where} mixes a revenue fact with behavioural matchers (${behavioural.join(', ')}); one event cannot be both.`, 'Split it into a behavioural step and a revenue step.');
    }
    if (!(REVENUE_EVENTS as readonly unknown[]).includes(value['revenue_event'])) {
      throw invalid(`${where}: revenue_event ${JSON.stringify(value['revenue_event'] ?? null)} is not a subscription lifecycle event.`, 'Use one of the allowed revenue events.', REVENUE_EVENTS);
    }
    return { source: 'revenue', revenue_event: value['revenue_event'] as RevenueEvent };
  }
  if (behavioural.length === 0) throw invalid(`${where} has no matcher.`, 'Give at least one of the matchers.', FUNNEL_BEHAVIOURAL_CONDITIONS);
  const out: BehaviouralConditions = {};
  for (const key of behavioural) {
    const pattern = value[key];
    const { maxLength, maxWildcards } = FUNNEL_MATCHER;
    if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > maxLength) {
      throw invalid(`${where}: ${key} must be a pattern of 1 to ${maxLength} characters.`, `Give the pattern as text of at most ${maxLength} characters; \`*\` is the wildcard, so a long value can be matched by its distinctive parts (e.g. "/blog/*/comments").`);
    }
    const wildcards = pattern.split('*').length - 1;
    if (wildcards > maxWildcards) {
      throw invalid(`${where}: ${key} has ${wildcards} \`*\`; a pattern takes at most ${maxWildcards}.`, `Use at most ${maxWildcards} \`*\` (consecutive \`*\` mean the same as one): match the distinctive parts of the value only.`);
    }
    out[key] = pattern;
  }
  return out;
}

/** Fills defaults of a new definition (the name from the step names). */
export function withDefaults(fields: Partial<FunnelDefinition>): FunnelDefinition {
  const steps = fields.steps as FunnelStep[];
  return {
    name: fields.name ?? steps.map((s) => s.name).join(' → ').slice(0, 200),
    scope: fields.scope ?? 'visitor',
    step_order: fields.step_order ?? 'sequential',
    window_days: fields.window_days ?? FUNNEL_WINDOW_DAYS.default,
    filters: fields.filters ?? {},
    steps,
  };
}

/**
 * Refuses a definition that could never count anyone as written. `eventTypes` is the catalog a
 * step's event_type is matched against: the types Sightline records and those the website sent.
 */
export function checkDefinition(definition: FunnelDefinition, eventTypes: readonly string[]): void {
  definition.steps.forEach((step, index) => {
    if (!isRevenueStep(step)) checkBehavioural(step.conditions as BehaviouralConditions, `Step ${index + 1} ("${step.name}")`, eventTypes);
  });
  const revenue = definition.steps.filter(isRevenueStep).length;
  const behavioural = definition.steps.length - revenue;
  if (revenue > 0 && behavioural > 0 && definition.scope === 'user') {
    throw unsupported(
      'This funnel mixes behavioural and revenue steps under scope=user. Revenue facts are keyed by identity and web signups by anonymous id, so under user scope the funnel would collapse to zero after the first step.',
      'Use scope=visitor for a funnel that mixes web steps and revenue steps, or keep only one kind of step.',
      ['visitor'],
    );
  }
  if (revenue > 0 && definition.step_order === 'strict') {
    throw unsupported(
      'step_order=strict cannot hold revenue steps: a CRM or billing fact is not part of the tracked event sequence, so "no other event in between" has no meaning for it.',
      'Use step_order=sequential (other events may happen between steps) or any_order.',
      ['sequential', 'any_order'],
    );
  }
  const first = definition.steps[0] as FunnelStep;
  const eventFilters = Object.keys(definition.filters).filter((d) => d !== 'identified');
  if (isRevenueStep(first) && eventFilters.length > 0) {
    throw unsupported(
      `The audience filter (${eventFilters.join(', ')}) applies to the event that enters the funnel, but the first step is a revenue fact, which has no page or session.`,
      'Filter only on identified, or start the funnel with a behavioural step.',
      ['identified'],
    );
  }
}

function checkBehavioural(conditions: BehaviouralConditions, where: string, eventTypes: readonly string[]): void {
  let types = eventTypes;
  if (conditions.event_type !== undefined) {
    const pattern = conditions.event_type;
    types = eventTypes.filter((t) => globMatches(pattern, t));
    if (types.length === 0) {
      throw invalidType(`${where}: event_type "${pattern}" matches no event type this website records.`, `Use one of the allowed event types (or a pattern matching one); a custom server-side type becomes allowed once the website has sent it (the first ${MAX_CUSTOM_EVENT_TYPES.toLocaleString('en-US')} of at most ${FUNNEL_MATCHER.maxLength} characters).`, eventTypes);
    }
  }
  const path = conditions.path_matches;
  if (path !== undefined) {
    if (!canStartWith(path, ['/'])) throw invalid(`${where}: path_matches "${path}" cannot match a path: paths start with "/".`, 'Start the pattern with "/" (or "*"); to match a full address use url_matches.');
    const bad = PATH_FORBIDDEN.find((c) => path.includes(c));
    if (bad) throw invalid(`${where}: path_matches "${path}" contains "${bad}", but paths are stored without query string or fragment.`, 'Match the query string with url_matches, or drop it from the pattern.');
  }
  const url = conditions.url_matches;
  if (url !== undefined && !canStartWith(url, URL_SCHEMES)) {
    throw invalid(`${where}: url_matches "${url}" cannot match a page URL: URLs start with http:// or https://.`, `Start the pattern with "https://", "http://" or "*" (the literal start is "${literalPrefix(url)}").`);
  }
  const name = conditions.event_name_matches;
  if (name !== undefined) {
    if (literalLength(name) > MAX_EVENT_NAME_LENGTH) throw invalid(`${where}: event_name_matches needs more than ${MAX_EVENT_NAME_LENGTH} characters, longer than any event name.`, `Shorten the pattern to at most ${MAX_EVENT_NAME_LENGTH} literal characters.`);
    if (types.every((t) => (FUNNEL_UNNAMED_EVENT_TYPES as readonly string[]).includes(t))) {
      throw invalidType(`${where}: event_name_matches cannot match ${types.join(', ')} events, which carry no name.`, 'Drop event_name_matches, or use an event type that carries a name.', eventTypes.filter((t) => !(FUNNEL_UNNAMED_EVENT_TYPES as readonly string[]).includes(t)));
    }
  }
  if (conditions.click_text_matches !== undefined && types.every((t) => (FUNNEL_NO_CLICK_TEXT_EVENT_TYPES as readonly string[]).includes(t))) {
    throw invalidType(`${where}: click_text_matches cannot match ${types.join(', ')} events, which carry no click text.`, 'Drop click_text_matches, or use an event type that carries click text.', eventTypes.filter((t) => !(FUNNEL_NO_CLICK_TEXT_EVENT_TYPES as readonly string[]).includes(t)));
  }
}

/** Known types first, then the website's own, each once. */
export function eventTypeCatalog(observed: readonly string[]): string[] {
  return [...new Set([...FUNNEL_KNOWN_EVENT_TYPES, ...[...observed].sort()])];
}
