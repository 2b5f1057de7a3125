// The SQL of funnel reads, built from a validated definition. Every value travels as a bound
// parameter; the text varies only with the funnel's shape (number of steps, which matchers, step
// order, models), never with a value a client sent.
//
// Two ways to answer (README "Read model"):
// - from the read model (`attemptsStepsQuery`; breakdown.sql.ts for breakdowns): the funnel's stored
//   attempts that entered in the window, each person's best one (max of `pick`), aggregated;
// - from the events (`stepsQuery`; `peopleSql` for breakdowns), while a funnel's attempts are being built:
//   the events of the scanned range that can fill a step and the revenue facts, each with a bit
//   mask of the steps it satisfies, grouped into one time-ordered array per person (identity merges
//   applied through identity_roots), one pass over each array finding the person's furthest attempt.
// Both give the same answer (the differential and property tests hold both to the oracle).
import { isRevenueStep, type BehaviouralConditions, type FilterDimension, type FunnelDefinition } from './definition';
import { globToLike } from './glob';

export const DAY_MS = 86_400_000;
/** Bit of an event mask set when the event passes the audience filter (steps use bits 0..9). */
export const EVENT_ENTRY_BIT = 15;
const STEP_BITS = 1023;
/** Sort rank of an event that fills no step: after every step at the same instant. */
const NO_STEP_RANK = 99;
/** 2^122 - 1: the largest hit key (README "Read model"); `pick` holds it minus the key that reached the step. */
export const KEY_MASK = '5316911983139663491615228241121378303';

export interface FunnelWindow {
  fromMs: number;
  toMs: number;
}

export interface CompiledQuery {
  sql: string;
  params: Record<string, unknown>;
}

export interface ReadScope {
  websiteId: string;
  workspaceId: string;
}

/** Event columns a matcher or filter reads (fixed names; never from input). */
const MATCHER_COLUMNS: Record<keyof BehaviouralConditions, string> = {
  event_type: 'event_type', path_matches: 'page', event_name_matches: 'event_name', url_matches: 'url', click_text_matches: 'click_text',
};
const FILTER_COLUMNS: Record<Exclude<FilterDimension, 'identified'>, string> = {
  channel: 'channel', source: 'source', medium: 'medium', campaign: 'campaign', utm_term: 'utm_term', utm_content: 'utm_content',
  referrer_domain: 'referrer_domain', landing_page: 'landing_page', country: 'country', region: 'region', city: 'city',
  device_type: 'device_type', browser: 'browser', operating_system: 'operating_system', page: 'page', hostname: 'hostname',
  page_title: 'page_title', event_name: 'event_name', event_type: 'event_type',
};
export class Params {
  readonly values: Record<string, unknown> = {};
  private n = 0;
  private bind(value: unknown, type: string): string {
    const name = `p${this.n++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }
  string(value: string): string {
    return this.bind(value, 'String');
  }
  strings(value: readonly string[]): string {
    return this.bind(value, 'Array(String)');
  }
}

/** One matcher over a column: equality without `*`, "has a value" for `*` alone, LIKE otherwise. */
function matcherSql(column: string, pattern: string, params: Params, optional: boolean): string {
  const present = optional ? `${column} != '' AND ` : '';
  if (!pattern.includes('*')) return `${column} = ${params.string(pattern)}`;
  if (/^\*+$/.test(pattern)) return optional ? `${column} != ''` : '1';
  return `(${present}like(${column}, ${params.string(globToLike(pattern))}))`;
}

/** Audience filter dimensions read from the entering event (identified is a person-level filter). */
export function eventFilters(definition: FunnelDefinition): [Exclude<FilterDimension, 'identified'>, string][] {
  return Object.entries(definition.filters).filter(([d]) => d !== 'identified') as [Exclude<FilterDimension, 'identified'>, string][];
}

/**
 * An event's mask for the funnel over identity_events columns: bit k when it fills behavioural
 * step k, bit EVENT_ENTRY_BIT when it passes the audience filter; null without behavioural steps.
 */
export function eventMaskSql(definition: FunnelDefinition, params: Params): string | null {
  const stepBits: string[] = [];
  definition.steps.forEach((step, k) => {
    if (isRevenueStep(step)) return;
    const conditions = step.conditions as BehaviouralConditions;
    const parts = (Object.keys(conditions) as (keyof BehaviouralConditions)[]).map((matcher) =>
      matcherSql(MATCHER_COLUMNS[matcher], conditions[matcher] as string, params, matcher !== 'event_type'));
    stepBits.push(`if(${parts.join(' AND ')}, ${2 ** k}, 0)`);
  });
  if (stepBits.length === 0) return null;
  const filters = eventFilters(definition);
  const filterSql = filters.length === 0 ? '1' : filters.map(([d, v]) => `${FILTER_COLUMNS[d]} = ${params.string(v)}`).join(' AND ');
  return `toUInt32(${stepBits.join(' + ')} + if(${filterSql}, ${2 ** EVENT_ENTRY_BIT}, 0))`;
}

/** Each merged identity id's person (merge root); ids never merged have no row. */
export const ROOTS_CTE = `roots AS (
  SELECT identity_id, argMax(root_id, version) AS root FROM identity_roots WHERE workspace_id = {workspace:UUID} GROUP BY identity_id
)`;

/** Revenue facts, once per milestone (earliest time), with their identity (named, else by email). */
export const REVENUE_FACTS_CTE = `revenue_facts AS (
  SELECT if(f.identity_id != '', f.identity_id, em.identity_id) AS identity_id, f.ts AS ts, f.stage AS stage, f.eid AS eid
    FROM (
      SELECT cityHash64(milestone_id) AS eid, toUnixTimestamp64Milli(min(occurred_at)) AS ts, any(stage) AS stage, max(identity_id) AS identity_id, max(email_hash) AS email_hash
        FROM revenue_events WHERE website_id = {website:UUID} GROUP BY milestone_id
    ) AS f
    LEFT JOIN (SELECT email_hash, min(identity_id) AS identity_id FROM emails WHERE workspace_id = {workspace:UUID} GROUP BY email_hash) AS em
      ON em.email_hash = f.email_hash
   WHERE if(f.identity_id != '', f.identity_id, em.identity_id) != ''
)`;

/** People known by an email or phone, or named by a revenue fact (the user scope), by person. */
export const IDENTIFIED_CTE = `identified_people AS (
  SELECT if(r.root != '', r.root, i.identity_id) AS person
    FROM (SELECT identity_id FROM identified WHERE workspace_id = {workspace:UUID}
          UNION ALL SELECT identity_id FROM revenue_facts) AS i
    LEFT JOIN roots AS r ON r.identity_id = i.identity_id
)`;

/** The person filter of a funnel's scope and `identified` filter, over a column holding the person (root id) or its key. */
export function personFilter(definition: FunnelDefinition, column: string, keyed: boolean): string {
  const identified = definition.filters.identified;
  const set = keyed ? 'SELECT reinterpretAsUInt128(sipHash128(person)) FROM identified_people' : 'SELECT person FROM identified_people';
  if (definition.scope === 'user' || identified === true) return `${column} IN (${set})`;
  if (identified === false) return `${column} NOT IN (${set})`;
  return '';
}

export const needsIdentified = (definition: FunnelDefinition) => definition.scope === 'user' || definition.filters.identified !== undefined;

interface Shape {
  steps: number;
  order: FunnelDefinition['step_order'];
}

/** The per-person CTEs of the event path: `people` has person, reached (0..L), entry (ms), path. */
export function peopleSql(definition: FunnelDefinition, window: FunnelWindow, ctx: ReadScope, params: Params): { sql: string; shape: Shape; sources: string } {
  const L = definition.steps.length;
  const W = definition.window_days * DAY_MS;
  const order = definition.step_order;
  Object.assign(params.values, {
    website: ctx.websiteId, workspace: ctx.workspaceId,
    scan_from: new Date(window.fromMs), scan_to: new Date(window.toMs + W + 1),
    entry_from: window.fromMs, entry_to: window.toMs, window_ms: W,
  });

  const revenueBits: string[] = [];
  const revenueStages: string[] = [];
  definition.steps.forEach((step, k) => {
    if (!isRevenueStep(step)) return;
    revenueBits.push(`if(stage = ${params.string(step.conditions.revenue_event)}, ${2 ** k}, 0)`);
    revenueStages.push(step.conditions.revenue_event);
  });
  const mask = eventMaskSql(definition, params);
  const rank = (m: string) => `multiIf(${Array.from({ length: L }, (_, k) => `bitTest(${m}, ${k}), ${k}`).join(', ')}, ${NO_STEP_RANK})`;

  const sources: string[] = [];
  if (mask !== null) {
    // strict needs every behavioural event of the person in range, to see what lies between steps;
    // identify calls only link identities and are not behaviour.
    const keep = order === 'strict' ? "event_type != 'identify'" : `bitAnd(m, ${STEP_BITS}) != 0`;
    sources.push(`SELECT identity_id, toUnixTimestamp64Milli(occurred_at) AS ts, ${mask} AS m, cityHash64(event_id) AS eid
        FROM identity_events
       WHERE website_id = {website:UUID} AND occurred_at >= {scan_from:DateTime64(3, 'UTC')} AND occurred_at < {scan_to:DateTime64(3, 'UTC')}
         AND identity_id != '' AND ${keep}`);
  }
  if (revenueBits.length > 0) {
    params.values['revenue_stages'] = revenueStages;
    // A revenue fact has no session or page: it passes the audience filter only when there is none
    // on the entering event (checkDefinition refuses a revenue first step with one).
    const entry = eventFilters(definition).length === 0 ? 2 ** EVENT_ENTRY_BIT : 0;
    sources.push(`SELECT identity_id, ts, toUInt32(${revenueBits.join(' + ')} + ${entry}) AS m, eid FROM revenue_facts
       WHERE ts >= toUnixTimestamp64Milli({scan_from:DateTime64(3, 'UTC')}) AND ts < toUnixTimestamp64Milli({scan_to:DateTime64(3, 'UTC')}) AND stage IN {revenue_stages:Array(String)}`);
  }

  const filter = personFilter(definition, 'person', false);
  const entryCond = order === 'any_order'
    ? `bitAnd(x.3, ${STEP_BITS}) != 0 AND bitTest(x.3, ${EVENT_ENTRY_BIT}) AND x.1 >= {entry_from:Int64} AND x.1 < {entry_to:Int64}`
    : `bitTest(x.3, 0) AND bitTest(x.3, ${EVENT_ENTRY_BIT}) AND x.1 >= {entry_from:Int64} AND x.1 < {entry_to:Int64}`;

  const sql = `
${ROOTS_CTE},
${REVENUE_FACTS_CTE},
${IDENTIFIED_CTE},
people AS (
  SELECT person, ${foldSql(L, order)}
    FROM (
      -- Grouped by identity id first, so the person lookup joins one row per identity, not per event;
      -- a person's identities are then put together (a duplicate event counts once: arrayDistinct).
      SELECT person, arraySort(arrayDistinct(arrayFlatten(groupArray(ids.evs)))) AS evs
        FROM (
          SELECT if(r.root != '', r.root, i.identity_id) AS person, i.evs AS evs
            FROM (
              SELECT identity_id, groupArray((ts, ${rank('m')}, m, eid)) AS evs
                FROM (${sources.join('\n                UNION ALL ')})
               GROUP BY identity_id
            ) AS i
            LEFT JOIN roots AS r ON r.identity_id = i.identity_id
        ) AS ids
        ${filter ? `WHERE ${filter}` : ''}
       GROUP BY person
      HAVING arrayExists(x -> ${entryCond}, evs)
    )
)`;
  return { sql, shape: { steps: L, order }, sources: sources.join('\n UNION ALL ') };
}

/**
 * The pass over one person's ordered events (x = (ts, rank, mask, id hash)), giving `reached` (steps
 * 0..reached-1 done), `entry` (ms of the reported attempt's first step) and `path` (its step times).
 */
function foldSql(L: number, order: FunnelDefinition['step_order']): string {
  const inWindow = 'x.1 >= {entry_from:Int64} AND x.1 < {entry_to:Int64}';
  const entry = `bitTest(x.3, 0) AND bitTest(x.3, ${EVENT_ENTRY_BIT}) AND ${inWindow}`;
  const empty = 'CAST([] AS Array(Int64))';
  if (order === 'any_order') {
    // Each attempt opens at an event filling any step inside the period and holds the events up to
    // window_ms later. Steps 0..k are reached when distinct events can fill them (Hall's condition:
    // every subset S of those steps is matched by at least |S| events); subsets are checked only with
    // their highest step, since smaller prefixes were checked before.
    const level = `arrayFirstIndex(k -> NOT arrayAll(j -> arraySum(p -> if(bitAnd(p.1, bitOr(j, bitShiftLeft(toUInt32(1), k))) != 0, p.2, 0), w.2)
        >= bitCount(bitOr(j, bitShiftLeft(toUInt32(1), k))), range(toUInt32(bitShiftLeft(1, k)))), range(${L}))`;
    return `arrayMap(s -> (s, arrayMap(d -> (d, countEqual(ms, d)), arrayDistinct(
                arrayFilter(m -> m != 0, arrayMap(x -> bitAnd(x.3, ${STEP_BITS}), arrayFilter(x -> x.1 >= s AND x.1 - s <= {window_ms:Int64}, evs))) AS ms))),
             arrayDistinct(arrayMap(x -> x.1, arrayFilter(x -> bitAnd(x.3, ${STEP_BITS}) != 0 AND bitTest(x.3, ${EVENT_ENTRY_BIT}) AND ${inWindow}, evs)))) AS windows,
           arrayMap(w -> (w.1, if((${level}) AS lv = 0, ${L}, lv - 1)), windows) AS attempts,
           arrayMax(arrayMap(a -> a.2, attempts)) AS reached,
           arrayFirst(a -> a.2 = reached, attempts).1 AS entry,
           ${empty} AS path`;
  }
  const extend = (k: number) => `arrayPushBack(acc.1[${k}], x.1)`;
  const reach = (k: number) => `bitTest(x.3, ${k}) AND length(acc.1[${k}]) > 0 AND x.1 - acc.1[${k}][1] <= {window_ms:Int64}`;
  // Index k+1 of the state holds the attempt at step k (1-based arrays).
  const levels = Array.from({ length: L }, (_, k) => {
    if (k === 0) return order === 'strict' ? `if(${entry}, [x.1], ${empty})` : `if(${entry}, [x.1], acc.1[1])`;
    if (order === 'strict') return `if(${reach(k)}, ${extend(k)}, ${empty})`;
    // sequential: at each step keep the attempt that entered latest (it has the most time left and
    // can do everything an earlier one can); a tie keeps the one already there.
    return `if(${reach(k)} AND (length(acc.1[${k + 1}]) = 0 OR acc.1[${k}][1] > acc.1[${k + 1}][1]), ${extend(k)}, acc.1[${k + 1}])`;
  });
  // sequential only: inside a run of events with the same single-step mask, the events between the
  // first and the last of a first-step run (each entry is dominated by the next, and the first is
  // kept for "first to reach"; runs break at the end of the period) and every event after the first
  // of a later step's run (the state it extends is unchanged, so it would only tie) change nothing.
  const runKey = (e: string) => `(${e}.3 * 2 + (${e}.1 < {entry_to:Int64}))`;
  const seq = order === 'sequential'
    ? `arrayFilter((x, i) -> NOT (
          (bitAnd(x.3, ${STEP_BITS}) = 1 AND i > 1 AND i < length(evs) AND ${runKey('evs[i - 1]')} = ${runKey('x')} AND ${runKey('evs[i + 1]')} = ${runKey('x')})
          OR (bitAnd(x.3, ${STEP_BITS}) > 1 AND bitCount(bitAnd(x.3, ${STEP_BITS})) = 1 AND i > 1 AND evs[i - 1].3 = x.3)
        ), evs, arrayEnumerate(evs))`
    : 'evs';
  // The reported attempt: the first to reach the furthest step.
  const fold = `arrayFold((acc, x) -> (
        [${levels.join(',\n         ')}] AS np,
        if(empty(arrayFirst(p -> length(p) > length(acc.2), arrayReverse(np))), acc.2, arrayFirst(p -> length(p) > length(acc.2), arrayReverse(np)))
      ), ${seq}, (arrayWithConstant(${L}, ${empty}), ${empty})).2`;
  // A person whose events fill no step after the first needs no pass: the first entry is the attempt.
  const only = `[arrayFirst(x -> ${entry}, evs).1]`;
  return `if(arrayExists(x -> bitAnd(x.3, ${STEP_BITS - 1}) != 0, evs), ${fold}, ${only}) AS path, length(path) AS reached, if(reached > 0, path[1], 0) AS entry`;
}

const reachedColumns = (L: number, reached: string) => Array.from({ length: L }, (_, k) => `countIf(${reached} >= ${k + 1})`).join(', ');

/** Steps of one window from the events: reached per step and the median seconds from the previous step. */
export function stepsQuery(definition: FunnelDefinition, window: FunnelWindow, ctx: ReadScope): CompiledQuery {
  const params = new Params();
  const { sql, shape } = peopleSql(definition, window, ctx, params);
  const L = shape.steps;
  const medians = shape.order === 'any_order'
    ? 'CAST([] AS Array(Float64))'
    : `[${Array.from({ length: L - 1 }, (_, k) => `quantileExactInclusiveIf(0.5)((path[${k + 2}] - path[${k + 1}]) / 1000, reached >= ${k + 2})`).join(', ')}]`;
  return { sql: `WITH ${sql}\nSELECT [${reachedColumns(L, 'reached')}] AS reached_counts, ${medians} AS median_seconds FROM people`, params: params.values };
}

/** The read model's attempts of a funnel's current generation entering in [from, to) of the given windows. */
export interface AttemptsRef {
  funnelId: string;
  generation: number;
}

/**
 * Steps of one window from the read model: each person's best attempt among those entering in the
 * window (max of `pick`), then reached per step and the medians of its gaps.
 */
export function attemptsStepsQuery(definition: FunnelDefinition, ref: AttemptsRef, window: FunnelWindow, ctx: ReadScope): CompiledQuery {
  const params = new Params();
  const L = definition.steps.length;
  Object.assign(params.values, {
    website: ctx.websiteId, workspace: ctx.workspaceId, funnel: ref.funnelId, generation: ref.generation,
    entry_from: new Date(window.fromMs), entry_to: new Date(window.toMs),
  });
  const filter = personFilter(definition, 'person_key', true);
  const medians = definition.step_order === 'any_order'
    ? 'CAST([] AS Array(Float64))'
    : `[${Array.from({ length: L - 1 }, (_, k) => `quantileExactInclusiveIf(0.5)(toUInt64OrZero(g[${k + 1}]) / 1000, reached >= ${k + 2})`).join(', ')}]`;
  const sql = `WITH ${needsIdentified(definition) ? `${ROOTS_CTE},\n${REVENUE_FACTS_CTE},\n${IDENTIFIED_CTE},` : ''}
best AS (
  SELECT person_key, max(pick) AS pk, argMax(gaps, pick) AS gs
    FROM funnel_attempts FINAL
   WHERE funnel_id = {funnel:UUID} AND generation = {generation:UInt32}
     AND entry_ts >= {entry_from:DateTime64(3, 'UTC')} AND entry_ts < {entry_to:DateTime64(3, 'UTC')}
     ${filter ? `AND ${filter}` : ''}
   GROUP BY person_key
)
SELECT [${reachedColumns(L, 'reached')}] AS reached_counts, ${medians} AS median_seconds
  FROM (SELECT toUInt8(bitShiftRight(pk, 244)) AS reached, splitByChar(',', gs) AS g FROM best)`;
  return { sql, params: params.values };
}

/**
 * The stages of a read, each run alone, for the benchmark's profile: on the event path the scan
 * with step masks, the per-person arrays without the pass, and the whole read; on the read model
 * the attempts of the window, and the whole read.
 */
export function profileQueries(definition: FunnelDefinition, window: FunnelWindow, ctx: ReadScope, ref?: AttemptsRef): Record<string, CompiledQuery> {
  const params = new Params();
  const { sql, sources } = peopleSql(definition, window, ctx, params);
  const full = stepsQuery(definition, window, ctx);
  const arrays = sql.replace(/SELECT person, (if\(arrayExists|arrayMap\(s ->)[\s\S]*?\n    FROM \(\n      -- Grouped/, 'SELECT person, length(evs) AS reached\n    FROM (\n      -- Grouped');
  const out: Record<string, CompiledQuery> = {
    'events: scan and step masks': { sql: `SELECT count() AS n FROM (${sources})`, params: params.values },
    'events: per-person arrays (identities joined, sorted)': { sql: `WITH ${arrays}\nSELECT count() AS people, sum(reached) AS events FROM people`, params: params.values },
    'events: whole steps read (with the pass per person)': full,
  };
  if (ref) {
    const p = { funnel: ref.funnelId, generation: ref.generation, from: new Date(window.fromMs), to: new Date(window.toMs) };
    const where = `funnel_id = {funnel:UUID} AND generation = {generation:UInt32} AND entry_ts >= {from:DateTime64(3, 'UTC')} AND entry_ts < {to:DateTime64(3, 'UTC')}`;
    out['read model: attempts entering in the window (count, FINAL)'] = { sql: `SELECT count() AS attempts FROM funnel_attempts FINAL WHERE ${where}`, params: p };
    out['read model: best attempt per person (max pick, FINAL)'] = { sql: `SELECT count() AS people, sum(r) AS steps FROM (SELECT person_key, toUInt8(bitShiftRight(max(pick), 244)) AS r FROM funnel_attempts FINAL WHERE ${where} GROUP BY person_key)`, params: p };
    out['read model: whole steps read'] = attemptsStepsQuery(definition, ref, window, ctx);
  }
  return out;
}
