// CRM milestones (milestone.reached: a deal entering a stage, a contact's lifecycle stage), credited
// to channels as GET /metrics?metrics=milestones&stages=... documents it: the metric's registry
// description ("milestones of the stages parameter reached in the window, credited by the
// attribution model the response names, last_touch unless attribution is given"), meta.definitions
// `journey` ("an outcome's journey is the person's sessions ... that started in the 90 days up to
// and including the outcome, ordered by start; an outcome with no such session is credited whole to
// Unattributed") and the attribution README's milestone rule ("the person comes from the identity,
// else the contact, else the newest conversion with the email"; a deal milestone's email is its
// first CRM contact's). Restated here from those words, not from the service's SQL.
import { CONVERSION_TYPES, type OracleDataset } from './dataset';
import { normaliseEmail } from './identity';
import { modelWeights } from './models';
import { byStart } from './sessions';
import { DAY_MS, LOOKBACK_DAYS, UNATTRIBUTED, type OracleSession, type OracleWindow, type RuleModel } from './types';

export interface OracleMilestone {
  /** milestone_id (e.g. salesforce:deal:<id>:<stage key>): one milestone however often it is announced. */
  id: string;
  /** The stage key (stageKey of the CRM's stage name, or deal_created / deal_won / ...). */
  stage: string;
  occurred_at: string;
  /** The person's identity when the milestone names one (a stage set on a contact through the API). */
  identity?: string | null;
  /** The email it is about: a contact's, or a deal's first CRM contact's; null for a deal without contacts. */
  email: string | null;
}

/** A conversion as the milestone rule reads it: its email, its person, its time. */
export interface OracleEmailConversion {
  email: string | null;
  person: string;
  occurredMs: number;
}

/** The dataset's conversions that carry an email, as the milestone rule reads them. */
export function emailConversionsOf(d: OracleDataset): OracleEmailConversion[] {
  return d.events
    .filter((e) => CONVERSION_TYPES.includes(e.event_type) && e.email !== null && e.email.trim() !== '')
    .map((e) => ({ email: e.email, person: d.people.personOf(e), occurredMs: Date.parse(e.occurred_at) }));
}

/** The person a milestone is about: its identity, else the person of the newest conversion with its email (trim + lower case), else null. */
export function milestonePerson(m: OracleMilestone, conversions: readonly OracleEmailConversion[]): string | null {
  if (m.identity) return m.identity;
  if (!m.email) return null;
  const email = normaliseEmail(m.email);
  let newest: OracleEmailConversion | null = null;
  for (const c of conversions) {
    if (!c.email || normaliseEmail(c.email) !== email) continue;
    if (newest === null || c.occurredMs > newest.occurredMs) newest = c;
  }
  return newest?.person ?? null;
}

/** The milestone's journey: the person's sessions started in the 90 days up to and including it (both ends), oldest first. */
export function milestoneJourney(occurredMs: number, person: string | null, sessions: readonly OracleSession[]): OracleSession[] {
  if (person === null) return [];
  const from = occurredMs - LOOKBACK_DAYS * DAY_MS;
  return sessions.filter((s) => s.person === person && s.startMs >= from && s.startMs <= occurredMs).sort(byStart);
}

export interface MilestoneCreditInput {
  milestones: readonly OracleMilestone[];
  sessions: readonly OracleSession[];
  conversions: readonly OracleEmailConversion[];
  /** The stages= parameter: stage keys counted. */
  stages: readonly string[];
  model: RuleModel;
  /** [from, to): milestones reached in it are counted. */
  window: OracleWindow;
}

/**
 * Milestones credited per channel: each milestone of `stages` reached in the window counts 1, split
 * over its journey's touches by the model (a channel's credit is the sum of its touches' weights);
 * without a journey the whole 1 goes to Unattributed. A milestone id is counted once (the first
 * listed wins: later copies are redeliveries). Channels only ever given a zero weight are not listed.
 */
export function milestoneCredit(input: MilestoneCreditInput): Map<string, number> {
  const stages = new Set(input.stages);
  const seen = new Set<string>();
  const out = new Map<string, number>();
  const add = (channel: string, credit: number): void => void out.set(channel, (out.get(channel) ?? 0) + credit);
  for (const m of input.milestones) {
    if (seen.has(m.id)) continue;
    seen.add(m.id);
    const ms = Date.parse(m.occurred_at);
    if (!stages.has(m.stage) || ms < input.window.fromMs || ms >= input.window.toMs) continue;
    const journey = milestoneJourney(ms, milestonePerson(m, input.conversions), input.sessions);
    if (journey.length === 0) {
      add(UNATTRIBUTED, 1);
      continue;
    }
    const weights = modelWeights(input.model, journey.map((s) => s.startMs), ms, journey.map((s) => s.channel));
    journey.forEach((s, i) => {
      if ((weights[i] ?? 0) > 0) add(s.channel, weights[i]!);
    });
  }
  return out;
}
