// The oracle's milestone rule on hand-worked cases (the numbers below are computed by hand from the
// rule in README.md, not from the code).
import { buildDataset } from './dataset';
import { emailConversionsOf, milestoneCredit, milestonePerson, type OracleMilestone } from './milestones';
import type { OracleEvent } from './types';

const T = Date.parse('2026-06-01T00:00:00.000Z');
const H = 3_600_000;
const D = 24 * H;
const iso = (ms: number): string => new Date(ms).toISOString();

function hit(anon: string, ms: number, channel: string, url = 'https://shop.test/'): OracleEvent {
  return {
    event_id: `${anon}-${ms}`, origin: 'tracker', event_type: 'pageview', event_name: null, occurred_at: iso(ms), anonymous_id: anon, email: null, phone: null,
    revenue: null, url, page: '/', channel, source: null, medium: null, campaign: null, term: null, content: null, click_ids: {},
  };
}
function conversion(anon: string, email: string, ms: number): OracleEvent {
  return { ...hit(anon, ms, 'Direct'), event_id: `conv-${anon}-${ms}`, origin: 'api', event_type: 'conversion', event_name: 'demo', email };
}

describe('oracle: CRM milestones', () => {
  // Ann: Paid Search 10 days before, Email 5 days before (a utm_medium=email URL so it is a session of its own), converts.
  const events: OracleEvent[] = [
    hit('ann', T - 10 * D, 'Paid Search', 'https://shop.test/?utm_source=google&utm_medium=cpc'),
    hit('ann', T - 5 * D, 'Email', 'https://shop.test/?utm_source=news&utm_medium=email'),
    conversion('ann', 'Ann@Acme.test', T - 4 * D),
    // Bob: one Referral visit 100 days before the milestone (outside the lookback), converts.
    hit('bob', T - 100 * D, 'Referral'),
    conversion('bob', 'bob@acme.test', T - 99 * D),
  ];
  const d = buildDataset(events);
  const conversions = emailConversionsOf(d);
  const window = { fromMs: T - 200 * D, toMs: T + D };
  const milestones: OracleMilestone[] = [
    { id: 'm1', stage: 'proposal', occurred_at: iso(T), email: ' ANN@acme.test' },
    { id: 'm1', stage: 'proposal', occurred_at: iso(T), email: 'ann@acme.test' }, // redelivered
    { id: 'm2', stage: 'proposal', occurred_at: iso(T), email: 'bob@acme.test' },
    { id: 'm3', stage: 'proposal', occurred_at: iso(T), email: null },
    { id: 'm4', stage: 'proposal', occurred_at: iso(T - 7 * D), email: 'ann@acme.test' }, // only the Paid Search session is before it
    { id: 'm5', stage: 'won', occurred_at: iso(T), email: 'ann@acme.test' }, // another stage
    { id: 'm6', stage: 'proposal', occurred_at: iso(T + 2 * D), email: 'ann@acme.test' }, // after the window
  ];

  it('finds the person through the newest conversion with the email, case and spaces aside', () => {
    expect(milestonePerson(milestones[0]!, conversions)).toBe(d.people.personOfAnonymousId('ann'));
    expect(milestonePerson({ id: 'x', stage: 's', occurred_at: iso(T), email: 'nobody@acme.test' }, conversions)).toBeNull();
  });

  it('credits by last_touch, first_touch and linear; no journey is Unattributed', () => {
    const credit = (model: 'last_touch' | 'first_touch' | 'linear') => Object.fromEntries(milestoneCredit({ milestones, sessions: d.sessions, conversions, stages: ['proposal'], model, window }));
    // m1: Email (last); m2: Bob's only session is 100 days old → Unattributed; m3: no email → Unattributed; m4: Paid Search.
    expect(credit('last_touch')).toEqual({ Email: 1, Unattributed: 2, 'Paid Search': 1 });
    expect(credit('first_touch')).toEqual({ 'Paid Search': 2, Unattributed: 2 });
    expect(credit('linear')).toEqual({ 'Paid Search': 1.5, Email: 0.5, Unattributed: 2 });
  });

  it('counts a touch exactly 90 days before the milestone, not one a millisecond earlier', () => {
    const e = [hit('cy', T - 90 * D, 'Email'), hit('dee', T - 90 * D - 1, 'Email'), conversion('cy', 'cy@a.test', T - D), conversion('dee', 'dee@a.test', T - D)];
    const dd = buildDataset(e);
    const ms: OracleMilestone[] = [
      { id: 'c', stage: 's', occurred_at: iso(T), email: 'cy@a.test' },
      { id: 'd', stage: 's', occurred_at: iso(T), email: 'dee@a.test' },
    ];
    expect(Object.fromEntries(milestoneCredit({ milestones: ms, sessions: dd.sessions, conversions: emailConversionsOf(dd), stages: ['s'], model: 'last_touch', window }))).toEqual({ Email: 1, Unattributed: 1 });
  });
});
