// The data-driven models over the journeys built here from the oracle's sessions; the models
// themselves are credit-models' independent restatement (its testing/oracle.ts: Markov by
// iteration, Shapley by its closed form), never the code the service runs.
// Journeys: a conversion's is its touches in the lookback (dataset.ts). A non-converting journey
// belongs to a person with a session started in the window and no conversion in it: their
// sessions started in the 90 days up to their last session of the window, oldest first.
import { oracleMarkovShares, oracleShapley as shapleyOf } from '@sightline/credit-models/testing/oracle';
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

export function oracleMarkov(j: OracleJourneys): DataDrivenCredit {
  const totals = totalsOf(j);
  const touched = j.converting.filter((c) => c.channels.length > 0);
  const shares = oracleMarkovShares([
    ...touched.map((c) => ({ channels: c.channels, converted: true })),
    ...j.nonConverting.map((n) => ({ channels: n, converted: false })),
  ]);
  if (!shares) return { rows: null, totals };
  const conversions = touched.length;
  const revenue = touched.reduce((a, c) => a + c.revenue, 0);
  const rows = new Map([...shares].map(([c, share]) => [label(c), { conversions: conversions * share, revenue: revenue * share }]));
  return { rows: addUnattributed(rows, j), totals };
}

export function oracleShapley(j: OracleJourneys): DataDrivenCredit {
  const totals = totalsOf(j);
  const touched = j.converting.filter((c) => c.channels.length > 0);
  if (touched.length === 0) return { rows: null, totals };
  const conversions = shapleyOf(touched.map((c) => ({ channels: c.channels, payoff: 1 })));
  const revenue = shapleyOf(touched.map((c) => ({ channels: c.channels, payoff: c.revenue })));
  const rows = new Map([...conversions].map(([c, n]) => [label(c), { conversions: n, revenue: revenue.get(c) ?? 0 }]));
  return { rows: addUnattributed(rows, j), totals };
}
