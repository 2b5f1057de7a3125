// The data-driven models restated from their documented rules (the registry's descriptions and
// meta.definitions), computed differently from the service on purpose:
// - markov: the conversion probability is found by iterating x <- b + Q x until it settles (the
//   service solves the linear system exactly), over journeys built here from the oracle's sessions;
// - shapley: Zhao et al.'s closed form for this game (arXiv 1804.05327, "simplified Shapley
//   value"): a coalition's worth is the sum of the payoffs of the journey sets it contains, so it is
//   a sum of unanimity games and each channel's value is the sum over journey sets T containing it
//   of payoff(T) / |T| (the service enumerates coalitions, or samples orderings).
// Journeys: a conversion's is its touches in the lookback (dataset.ts). A non-converting journey
// belongs to a person with a session started in the window and no conversion in it: their
// sessions started in the 90 days up to their last session of the window, oldest first.
import { conversionsIn, inWindow, type OracleDataset } from './dataset';
import { byStart } from './sessions';
import { DAY_MS, LOOKBACK_DAYS, UNATTRIBUTED, type OracleSession, type OracleWindow } from './types';
import type { Credit } from './metrics';

export const DIRECT = 'Direct';

/** Direct dropped from a channel sequence unless nothing else is left (exclude_direct). */
export function withoutDirect(channels: readonly string[]): string[] {
  const rest = channels.filter((c) => c !== DIRECT);
  return rest.length > 0 ? rest : [...channels];
}

const label = (channel: string): string => (channel === '' ? '(none)' : channel);

export interface OracleJourneys {
  converting: { channels: string[]; revenue: number }[];
  nonConverting: string[][];
}

export function oracleJourneys(d: OracleDataset, w: OracleWindow, excludeDirect: boolean): OracleJourneys {
  const shape = (channels: string[]): string[] => (excludeDirect ? withoutDirect(channels) : channels);
  const conversions = conversionsIn(d, w);
  const converters = new Set(conversions.map((c) => c.person));
  const converting = conversions.map((c) => ({ channels: shape(c.journey.map((t) => t.channel)), revenue: c.revenue }));
  const byPerson = new Map<string, OracleSession[]>();
  for (const s of d.sessions) if (s.startMs < w.toMs) byPerson.set(s.person, [...(byPerson.get(s.person) ?? []), s]);
  const nonConverting: string[][] = [];
  for (const [person, sessions] of byPerson) {
    if (converters.has(person)) continue;
    const inside = sessions.filter((s) => inWindow(s.startMs, w));
    if (inside.length === 0) continue;
    const last = Math.max(...inside.map((s) => s.startMs));
    const journey = sessions.filter((s) => s.startMs <= last && s.startMs >= last - LOOKBACK_DAYS * DAY_MS).sort(byStart);
    nonConverting.push(shape(journey.map((s) => s.channel)));
  }
  return { converting, nonConverting };
}

/** Credit by channel label (Unattributed for conversions without a touch), or null when the model cannot answer. */
export interface DataDrivenCredit {
  rows: Map<string, Credit> | null;
  totals: Credit;
}

function totalsOf(j: OracleJourneys): Credit {
  return { conversions: j.converting.length, revenue: j.converting.reduce((a, c) => a + c.revenue, 0) };
}

function addUnattributed(rows: Map<string, Credit>, j: OracleJourneys): Map<string, Credit> {
  const none = j.converting.filter((c) => c.channels.length === 0);
  if (none.length > 0) rows.set(UNATTRIBUTED, { conversions: none.length, revenue: none.reduce((a, c) => a + c.revenue, 0) });
  return rows;
}

/** P(conversion) from start, with `removed` a dead end, by iteration. */
function conversionProbability(sequences: { channels: string[]; converted: boolean }[], removed: string | null): number {
  const out = new Map<string, Map<string, number>>();
  const count = (from: string, to: string) => {
    const row = out.get(from) ?? new Map<string, number>();
    row.set(to, (row.get(to) ?? 0) + 1);
    out.set(from, row);
  };
  for (const s of sequences) {
    const states = ['(start)', ...s.channels, s.converted ? '(conversion)' : '(null)'];
    for (let i = 0; i + 1 < states.length; i++) count(states[i] as string, states[i + 1] as string);
  }
  let x = new Map<string, number>();
  for (let round = 0; round < 100_000; round++) {
    const next = new Map<string, number>();
    let change = 0;
    for (const [from, row] of out) {
      if (from === removed) { next.set(from, 0); continue; }
      const total = [...row.values()].reduce((a, b) => a + b, 0);
      let p = 0;
      for (const [to, n] of row) p += (n / total) * (to === '(conversion)' ? 1 : to === '(null)' || to === removed ? 0 : x.get(to) ?? 0);
      next.set(from, p);
      change = Math.max(change, Math.abs(p - (x.get(from) ?? 0)));
    }
    x = next;
    if (change < 1e-15 && round > 0) break;
  }
  return x.get('(start)') ?? 0;
}

export function oracleMarkov(j: OracleJourneys): DataDrivenCredit {
  const totals = totalsOf(j);
  const touched = j.converting.filter((c) => c.channels.length > 0);
  const sequences = [
    ...touched.map((c) => ({ channels: c.channels, converted: true })),
    ...j.nonConverting.filter((n) => n.length > 0).map((n) => ({ channels: n, converted: false })),
  ];
  const base = conversionProbability(sequences, null);
  if (touched.length === 0 || base <= 0) return { rows: null, totals };
  const channels = [...new Set(sequences.flatMap((s) => s.channels))];
  const effects = new Map(channels.map((c) => [c, Math.max(0, 1 - conversionProbability(sequences, c) / base)]));
  const sum = [...effects.values()].reduce((a, b) => a + b, 0);
  const conversions = touched.length;
  const revenue = touched.reduce((a, c) => a + c.revenue, 0);
  const rows = new Map([...effects].map(([c, e]) => [label(c), { conversions: (conversions * e) / sum, revenue: (revenue * e) / sum }]));
  return { rows: addUnattributed(rows, j), totals };
}

export function oracleShapley(j: OracleJourneys): DataDrivenCredit {
  const totals = totalsOf(j);
  const touched = j.converting.filter((c) => c.channels.length > 0);
  if (touched.length === 0) return { rows: null, totals };
  const rows = new Map<string, Credit>();
  for (const c of touched) {
    const set = [...new Set(c.channels)];
    for (const channel of set) {
      const row = rows.get(label(channel)) ?? { conversions: 0, revenue: 0 };
      row.conversions += 1 / set.length;
      row.revenue += c.revenue / set.length;
      rows.set(label(channel), row);
    }
  }
  return { rows: addUnattributed(rows, j), totals };
}
