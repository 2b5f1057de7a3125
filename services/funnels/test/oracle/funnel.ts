// Funnel steps and breakdown from the rules in README.md, by brute force: every attempt of every
// person is walked on its own, and any-order steps are matched with augmenting paths.
import type { FunnelDefinition } from '../../src/definition';
import { oracleMarkovShares, oracleShapley } from '@sightline/credit-models/testing/oracle';
import { matches } from './glob';
import { DAY_MS, HALF_LIFE_MS, LOOKBACK_MS, type Models, type RuleModels, type OracleEvent, type OracleRevenueFact, type OracleWindow } from './types';

interface Item {
  ts: number;
  rank: number;
  id: string;
  steps: boolean[];
  entryOk: boolean;
  behavioural: boolean;
  type: string;
}

export interface PersonResult {
  person: string;
  reached: number;
  entry: number;
  path: number[];
}

const isRevenue = (c: FunnelDefinition['steps'][number]['conditions']): c is { source: 'revenue'; revenue_event: string } & typeof c => 'source' in c;

function stepMatches(definition: FunnelDefinition, e: OracleEvent, k: number): boolean {
  const c = (definition.steps[k] as FunnelDefinition['steps'][number]).conditions;
  if (isRevenue(c)) return false;
  if (c.event_type !== undefined && !matches(c.event_type, e.type)) return false;
  if (c.path_matches !== undefined && !matches(c.path_matches, e.page)) return false;
  if (c.event_name_matches !== undefined && !matches(c.event_name_matches, e.name)) return false;
  if (c.url_matches !== undefined && !matches(c.url_matches, e.url)) return false;
  if (c.click_text_matches !== undefined && !matches(c.click_text_matches, e.text)) return false;
  return true;
}

function passesFilter(definition: FunnelDefinition, e: OracleEvent): boolean {
  return Object.entries(definition.filters).every(([d, v]) => d === 'identified' || (e.attrs[d] ?? '') === v);
}

function items(definition: FunnelDefinition, events: readonly OracleEvent[], facts: readonly OracleRevenueFact[]): Item[] {
  const L = definition.steps.length;
  const out: Item[] = events.map((e) => ({
    ts: e.ts, id: e.id, type: e.type, behavioural: true,
    steps: Array.from({ length: L }, (_, k) => stepMatches(definition, e, k)),
    entryOk: passesFilter(definition, e), rank: 0,
  }));
  const eventFilter = Object.keys(definition.filters).some((d) => d !== 'identified');
  for (const f of facts) {
    out.push({
      ts: f.ts, id: f.id, type: 'revenue', behavioural: false, entryOk: !eventFilter, rank: 0,
      steps: definition.steps.map((s) => isRevenue(s.conditions) && s.conditions.revenue_event === f.stage),
    });
  }
  for (const it of out) {
    const first = it.steps.indexOf(true);
    it.rank = first === -1 ? 99 : first;
  }
  // Same instant: step order, then the mask (as a number), then id (events equal in all three are
  // interchangeable, so the service may order those by any id).
  const maskOf = (it: Item) => it.steps.reduce((m, on, k) => m + (on ? 2 ** k : 0), it.entryOk ? 2 ** 15 : 0);
  return out.sort((a, b) => a.ts - b.ts || a.rank - b.rank || maskOf(a) - maskOf(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** One person's furthest attempt under the definition's step order. */
export function personResult(definition: FunnelDefinition, window: OracleWindow, person: string, events: readonly OracleEvent[], facts: readonly OracleRevenueFact[]): PersonResult | null {
  const W = definition.window_days * DAY_MS;
  const L = definition.steps.length;
  const all = items(definition, events, facts);
  const inPeriod = (t: number) => t >= window.fromMs && t < window.toMs;

  if (definition.step_order === 'any_order') {
    const starts = [...new Set(all.filter((it) => it.steps.some(Boolean) && it.entryOk && inPeriod(it.ts)).map((it) => it.ts))].sort((a, b) => a - b);
    let best: PersonResult | null = null;
    for (const s of starts) {
      const inside = all.filter((it) => it.ts >= s && it.ts - s <= W);
      let reached = 0;
      while (reached < L && matchable(inside, reached + 1)) reached += 1;
      if (!best || reached > best.reached) best = { person, reached, entry: s, path: [] };
    }
    return best;
  }

  // strict looks at the person's whole behavioural sequence (identify calls aside); sequential only
  // at the events that fill some step (the others cannot matter).
  const seq = definition.step_order === 'strict' ? all.filter((it) => it.behavioural && it.type !== 'identify') : all.filter((it) => it.steps.some(Boolean));
  let best: { reached: number; done: number; entryIndex: number; path: number[] } | null = null;
  seq.forEach((it, i) => {
    if (!(it.steps[0] && it.entryOk && inPeriod(it.ts))) return;
    const path = [it.ts];
    let at = i;
    for (let k = 1; k < L; k += 1) {
      let found = -1;
      if (definition.step_order === 'strict') {
        const next = seq[at + 1];
        if (next && next.steps[k] && next.ts - it.ts <= W) found = at + 1;
      } else {
        for (let j = at + 1; j < seq.length; j += 1) {
          const cand = seq[j] as Item;
          if (cand.ts - it.ts > W) break;
          if (cand.steps[k]) {
            found = j;
            break;
          }
        }
      }
      if (found === -1) break;
      at = found;
      path.push((seq[found] as Item).ts);
    }
    const attempt = { reached: path.length, done: at, entryIndex: i, path };
    // Furthest first; then the one that got there first; then the one that entered last.
    if (!best || attempt.reached > best.reached || (attempt.reached === best.reached && (attempt.done < best.done || (attempt.done === best.done && attempt.entryIndex > best.entryIndex)))) {
      best = attempt;
    }
  });
  if (!best) return null;
  const b = best as { reached: number; path: number[] };
  return { person, reached: b.reached, entry: b.path[0] as number, path: b.path };
}

/** Whether steps 0..n-1 can each be filled by a different event (augmenting paths). */
function matchable(inside: readonly Item[], n: number): boolean {
  const owner = new Map<number, number>();
  const tryStep = (k: number, seen: Set<number>): boolean => {
    for (let e = 0; e < inside.length; e += 1) {
      if (!(inside[e] as Item).steps[k] || seen.has(e)) continue;
      seen.add(e);
      const holder = owner.get(e);
      if (holder === undefined || tryStep(holder, seen)) {
        owner.set(e, k);
        return true;
      }
    }
    return false;
  };
  for (let k = 0; k < n; k += 1) if (!tryStep(k, new Set())) return false;
  return true;
}

export interface OracleInput {
  events: readonly OracleEvent[];
  facts: readonly OracleRevenueFact[];
  /** People known by an email or phone (or named by a revenue fact). */
  identified: ReadonlySet<string>;
}

export function peopleResults(definition: FunnelDefinition, window: OracleWindow, input: OracleInput): PersonResult[] {
  const W = definition.window_days * DAY_MS;
  const scanTo = window.toMs + W + 1;
  const inScan = (t: number) => t >= window.fromMs && t < scanTo;
  const byPerson = new Map<string, { events: OracleEvent[]; facts: OracleRevenueFact[] }>();
  const slot = (p: string) => byPerson.get(p) ?? byPerson.set(p, { events: [], facts: [] }).get(p)!;
  for (const e of input.events) if (inScan(e.ts)) slot(e.person).events.push(e);
  const stages = new Set(definition.steps.flatMap((s) => (isRevenue(s.conditions) ? [s.conditions.revenue_event] : [])));
  for (const f of input.facts) if (inScan(f.ts) && stages.has(f.stage)) slot(f.person).facts.push(f);
  const onlyIdentified = definition.scope === 'user' || definition.filters.identified === true;
  const onlyAnonymous = definition.filters.identified === false;
  const out: PersonResult[] = [];
  for (const [person, { events, facts }] of byPerson) {
    if (onlyIdentified && !input.identified.has(person)) continue;
    if (onlyAnonymous && input.identified.has(person)) continue;
    const r = personResult(definition, window, person, events, facts);
    if (r && r.reached > 0) out.push(r);
  }
  return out;
}

export interface OracleStep {
  reached: number;
  median: number | null;
}

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function oracleSteps(definition: FunnelDefinition, window: OracleWindow, input: OracleInput): OracleStep[] {
  const people = peopleResults(definition, window, input);
  return definition.steps.map((_, k) => {
    const at = people.filter((p) => p.reached >= k + 1);
    const median_ = k === 0 || definition.step_order === 'any_order' ? null : median(at.map((p) => ((p.path[k] as number) - (p.path[k - 1] as number)) / 1000));
    return { reached: at.length, median: median_ };
  });
}

/** `channels`: each touch's channel (last_non_direct skips Direct; all Direct: the last). */
export function modelWeights(model: RuleModels, starts: readonly number[], at: number, channels: readonly string[] = []): number[] {
  const n = starts.length;
  switch (model) {
    case 'last_non_direct': {
      let pick = n - 1;
      while (pick > 0 && channels[pick] === 'Direct') pick -= 1;
      if (channels[pick] === 'Direct') pick = n - 1;
      return starts.map((_, i) => (i === pick ? 1 : 0));
    }
    case 'first_touch':
      return starts.map((_, i) => (i === 0 ? 1 : 0));
    case 'last_touch':
      return starts.map((_, i) => (i === n - 1 ? 1 : 0));
    case 'linear':
      return starts.map(() => 1 / n);
    case 'u_shaped':
      if (n === 1) return [1];
      if (n === 2) return [0.5, 0.5];
      return starts.map((_, i) => (i === 0 || i === n - 1 ? 0.4 : 0.2 / (n - 2)));
    case 'time_decay': {
      const raw = starts.map((s) => 0.5 ** ((at - s) / HALF_LIFE_MS));
      const sum = raw.reduce((a, b) => a + b, 0);
      return raw.map((w) => w / sum);
    }
  }
}

export interface OracleBreakdown {
  /** value → model → [entered, completed] */
  credit: Map<string, Map<Models, Cell>>;
  entered: number;
  completed: number;
}

/** Touches are the person's sessions (by session id, the earliest start, the attributes of the session's earliest event). */
export interface BreakdownOptions {
  /** Direct touches dropped before weighing, unless all of a journey's are Direct. */
  excludeDirect?: boolean;
}

export function oracleBreakdown(definition: FunnelDefinition, window: OracleWindow, input: OracleInput, dimension: string, models: readonly Models[], options: BreakdownOptions = {}): OracleBreakdown {
  const people = peopleResults(definition, window, input);
  const L = definition.steps.length;
  const sessions = new Map<string, Map<string, { start: number; firstHit: number; value: string; channel: string }>>();
  for (const e of input.events) {
    if (!e.session) continue;
    const mine = sessions.get(e.person) ?? sessions.set(e.person, new Map()).get(e.person)!;
    const value = dimension in e.session.attrs ? (e.session.attrs[dimension] as string) : (e.attrs[dimension] ?? '');
    // last_non_direct and exclude_direct read each touch's channel, whatever the dimension.
    const channel = 'channel' in e.session.attrs ? (e.session.attrs['channel'] as string) : (e.attrs['channel'] ?? '');
    const seen = mine.get(e.session.id);
    if (!seen) mine.set(e.session.id, { start: e.session.startedAt, firstHit: e.ts, value, channel });
    else {
      seen.start = Math.min(seen.start, e.session.startedAt);
      if (e.ts < seen.firstHit) {
        seen.firstHit = e.ts;
        seen.value = value;
        seen.channel = channel;
      }
    }
  }
  const credit = new Map<string, Map<Models, Cell>>();
  const add = (value: string, model: Models, entered: number, completed: number) => {
    const row = credit.get(value) ?? credit.set(value, new Map()).get(value)!;
    const cell = row.get(model) ?? [0, 0];
    row.set(model, [(cell[0] as number) + entered, (cell[1] as number) + completed]);
  };
  const label = (value: string) => (value === '' ? '(none)' : value);
  let completed = 0;
  const journeys: { values: string[]; done: boolean }[] = [];
  const untouched = { entered: 0, completed: 0 };
  for (const p of people) {
    const done = p.reached >= L;
    if (done) completed += 1;
    let touches = [...(sessions.get(p.person) ?? new Map()).entries()]
      .filter(([, s]) => s.start <= p.entry && p.entry - s.start <= LOOKBACK_MS)
      .sort((a, b) => a[1].start - b[1].start || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    if (options.excludeDirect && touches.some(([, s]) => s.channel !== DIRECT)) touches = touches.filter(([, s]) => s.channel !== DIRECT);
    if (touches.length === 0) {
      untouched.entered += 1;
      if (done) untouched.completed += 1;
    } else {
      journeys.push({ values: touches.map(([, s]) => label(s.value)), done });
    }
    for (const model of models.filter(isRule)) {
      if (touches.length === 0) {
        add('Unattributed', model, 1, done ? 1 : 0);
        continue;
      }
      const w = modelWeights(model, touches.map(([, s]) => s.start), p.entry, touches.map(([, s]) => s.channel));
      touches.forEach(([, s], i) => add(label(s.value), model, w[i] as number, done ? w[i] as number : 0));
    }
  }
  for (const model of models.filter((m) => !isRule(m))) {
    const columns = model === 'markov' ? markovColumns(journeys) : shapleyColumns(journeys);
    // People without a touch are Unattributed in every column the model answers.
    if (columns.entered && untouched.entered > 0) columns.entered.set('Unattributed', untouched.entered);
    if (columns.completed && untouched.entered > 0) columns.completed.set('Unattributed', untouched.completed);
    for (const value of new Set([...(columns.entered?.keys() ?? []), ...(columns.completed?.keys() ?? [])])) {
      const row = credit.get(value) ?? credit.set(value, new Map()).get(value)!;
      row.set(model, [columns.entered ? columns.entered.get(value) ?? 0 : null, columns.completed ? columns.completed.get(value) ?? 0 : null]);
    }
  }
  return { credit, entered: people.length, completed };
}

/** A row's entered and completed credit; null where the model cannot answer that column. */
export type Cell = [number | null, number | null];

const DIRECT = 'Direct';
const isRule = (m: Models): m is RuleModels => m !== 'markov' && m !== 'shapley';

interface Columns {
  entered: Map<string, number> | null;
  completed: Map<string, number> | null;
}

/** markov: completing with non-completers as null journeys; entering with every journey converting. */
function markovColumns(journeys: readonly { values: string[]; done: boolean }[]): Columns {
  const scaled = (shares: Map<string, number> | null, total: number) => shares && new Map([...shares].map(([c, share]) => [c, share * total]));
  return {
    entered: scaled(oracleMarkovShares(journeys.map((j) => ({ channels: j.values, converted: true }))), journeys.length),
    completed: scaled(oracleMarkovShares(journeys.map((j) => ({ channels: j.values, converted: j.done }))), journeys.filter((j) => j.done).length),
  };
}

/** shapley: each journey's people split evenly across its distinct channels (the closed form). */
function shapleyColumns(journeys: readonly { values: string[]; done: boolean }[]): Columns {
  return {
    entered: journeys.length > 0 ? oracleShapley(journeys.map((j) => ({ channels: j.values, payoff: 1 }))) : null,
    completed: journeys.some((j) => j.done) ? oracleShapley(journeys.map((j) => ({ channels: j.values, payoff: j.done ? 1 : 0 }))) : null,
  };
}
