// The decisions a write-back request gets when it arrives (pure), and the documented payload shapes.
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { retryDelayMs, parseRetryAfter, DEFAULT_RETRY_POLICY } from './backoff';
import type { AdDestinationRow } from './connection';
import { googleDateTime } from './google-ads';
import { hashEmail } from './meta-ads';
import { planWriteback, sentKey, type PlanFacts } from './plan';
import { mergeOlderChanges, trimByNewer } from './supersede';

const AT = new Date('2026-03-20T15:04:05.678Z');
const GOOGLE: AdDestinationRow = { platform: 'google_ads', workspace_id: 'w', settings: { customer_id: '123-456-7890', conversion_action_id: '987', api: 'google_ads_api' } };
const META: AdDestinationRow = { platform: 'meta_ads', workspace_id: 'w', settings: { pixel_id: '555' } };

function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  return { ...MESSAGE_EXAMPLES['outcome.writeback_requested'], click_ids: { gclid: 'g-1', fbclid: 'F-1' }, ...overrides };
}

function facts(overrides: Partial<PlanFacts> = {}): PlanFacts {
  return { crmProvider: 'hubspot', crmKnown: new Map(), destinations: [GOOGLE, META], adSent: new Map(), ...overrides };
}

const byTarget = (rows: ReturnType<typeof planWriteback>['rows']) => Object.fromEntries(rows.map((r) => [r.target, r]));

describe('planWriteback', () => {
  it('queues the CRM push and both uploads for a sale with click ids', () => {
    const plan = planWriteback(request(), AT, facts());
    const rows = byTarget(plan.rows);
    expect(rows['crm']).toMatchObject({ status: 'pending', provider: 'hubspot' });
    expect(rows['google_ads']?.payload).toEqual({
      conversions: [{
        conversionAction: 'customers/1234567890/conversionActions/987',
        gclid: 'g-1',
        conversionDateTime: '2026-03-20 15:04:05+00:00',
        conversionValue: 12000,
        currencyCode: 'EUR',
        orderId: MESSAGE_EXAMPLES['outcome.writeback_requested'].conversion_id,
      }],
      partialFailure: true,
    });
    expect(rows['meta_ads']?.payload).toEqual({
      data: [{
        event_name: 'Purchase',
        event_time: Math.floor(AT.getTime() / 1000),
        event_id: MESSAGE_EXAMPLES['outcome.writeback_requested'].conversion_id,
        action_source: 'system_generated',
        user_data: { fbc: `fb.1.${Date.parse('2026-03-05T09:00:00.000Z')}.F-1`, em: [hashEmail('ada@example.com')] },
        custom_data: { value: 12000, currency: 'EUR' },
      }],
    });
    expect(plan.crmHolds).toEqual([]);
  });

  it('never writes a change that came from the CRM back to it, and remembers what the CRM holds', () => {
    const plan = planWriteback(request({ requested_by: 'crm:hubspot' }), AT, facts());
    expect(byTarget(plan.rows)['crm']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('came from the CRM') });
    expect(plan.crmHolds).toEqual([{ field: 'sales_value', value: 12000 }]);
  });

  it('skips a change the CRM already holds (the echo of our own write or of its own value)', () => {
    const known = new Map<string, unknown>([['sales_value', 12000]]);
    expect(byTarget(planWriteback(request(), AT, facts({ crmKnown: known })).rows)['crm']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('already holds') });
    const other = new Map<string, unknown>([['sales_value', 11000]]);
    expect(byTarget(planWriteback(request(), AT, facts({ crmKnown: other })).rows)['crm']?.status).toBe('pending');
  });

  it('records "no CRM connected" without an error', () => {
    expect(byTarget(planWriteback(request(), AT, facts({ crmProvider: null })).rows)['crm']).toMatchObject({ status: 'skipped', detail: 'no CRM connected' });
  });

  it('uploads nothing without the platform click id, and says so', () => {
    const rows = byTarget(planWriteback(request({ click_ids: {} }), AT, facts()).rows);
    expect(rows['google_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no gclid') });
    expect(rows['meta_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no fbclid') });
    const gbraid = byTarget(planWriteback(request({ click_ids: { gbraid: 'b-1' } }), AT, facts()).rows);
    expect((gbraid['google_ads']?.payload as { conversions: Record<string, unknown>[] }).conversions[0]).toMatchObject({ gbraid: 'b-1' });
  });

  it('uploads only conversion-worthy changes, never spam, and once per conversion', () => {
    const notes = request({ changes: [{ field: 'notes', old_value: null, new_value: 'called' }] });
    expect(planWriteback(notes, AT, facts()).rows.map((r) => r.target)).toEqual(['crm']);
    const spam = request({ current: { ...request().current, is_spam: true } });
    expect(planWriteback(spam, AT, facts()).rows.map((r) => r.target)).toEqual(['crm']);
    const handled = byTarget(planWriteback(request(), AT, facts({ adSent: new Map([[sentKey('google_ads', 'conversion'), { key: 'conversion', value: 12000, currency: 'EUR' }]]) })).rows);
    expect(handled['google_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('already uploaded') });
    expect(handled['meta_ads']?.status).toBe('pending');
  });

  it('counts a status the account maps to a conversion, sending no value when the contact has none', () => {
    const won = request({
      changes: [{ field: 'status', old_value: 'open', new_value: 'Won' }],
      current: { ...request().current, sales_value: null },
    });
    const rows = byTarget(planWriteback(won, AT, facts()).rows);
    const conversion = (rows['google_ads']?.payload as { conversions: Record<string, unknown>[] }).conversions[0]!;
    expect(conversion['conversionValue']).toBeUndefined();
    const event = (rows['meta_ads']?.payload as { data: Record<string, unknown>[] }).data[0]!;
    expect(event).toMatchObject({ event_name: 'Lead' });
    expect(event['custom_data']).toBeUndefined();
    const custom = facts({ destinations: [{ ...GOOGLE, settings: { ...(GOOGLE.settings as object), conversion_statuses: ['closed'] } }] });
    expect(planWriteback(won, AT, custom).rows.map((r) => r.target)).toEqual(['crm']);
  });

  it('records one readable skip per request for a spend-only account, and nothing when there is nothing to send', () => {
    const spendOnly = facts({
      destinations: [
        { platform: 'google_ads', workspace_id: 'w', settings: { customer_id: '123-456-7890' } },
        { platform: 'meta_ads', workspace_id: 'w', settings: { ad_account_id: 'act_1' } },
        { platform: 'linkedin_ads', workspace_id: 'w', settings: { ad_account_id: '5080001' } },
      ],
    });
    const rows = byTarget(planWriteback(request(), AT, spendOnly).rows);
    expect(rows['google_ads']).toMatchObject({
      status: 'skipped',
      detail: 'no conversion action configured for Google Ads: conversions are not sent; add one with `sightline connections add google-ads ... --conversion-action-id`',
    });
    expect(rows['meta_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no pixel configured for Meta') });
    expect(rows['linkedin_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('--conversion-rule-id') });
    expect(planWriteback(request(), AT, spendOnly).rows.filter((r) => r.target !== 'crm').every((r) => r.sends === undefined)).toBe(true);
    const notes = request({ changes: [{ field: 'notes', old_value: null, new_value: 'called' }] });
    expect(planWriteback(notes, AT, spendOnly).rows.map((r) => r.target)).toEqual(['crm']);
    // The other settings of a spend-only account are still checked.
    const broken = facts({ destinations: [{ platform: 'google_ads', workspace_id: 'w', settings: { customer_id: 'abc' } }] });
    expect(byTarget(planWriteback(request(), AT, broken).rows)['google_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('settings are invalid: setting "customer_id"') });
  });

  it('records unusable account settings as a skip with the reason', () => {
    const broken = facts({ destinations: [{ ...GOOGLE, settings: { customer_id: 'abc' } }] });
    expect(byTarget(planWriteback(request(), AT, broken).rows)['google_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('customer_id') });
  });
});

describe('superseding waiting CRM write-backs', () => {
  const older = request({ changes: [{ field: 'status', old_value: 'open', new_value: 'won' }, { field: 'notes', old_value: null, new_value: 'n1' }] });

  it('merges the fields an older request changed into the newer one', () => {
    const newer = request({ changes: [{ field: 'sales_value', old_value: null, new_value: 12000 }] });
    expect(mergeOlderChanges(newer, [older]).changes).toEqual([
      { field: 'sales_value', old_value: null, new_value: 12000 },
      { field: 'status', old_value: 'open', new_value: 'won' },
      { field: 'notes', old_value: null, new_value: 'n1' },
    ]);
  });

  it('drops from a waiting request the fields a newer change set, and skips it when nothing is left', () => {
    const fromCrm = request({ requested_by: 'crm:hubspot', changes: [{ field: 'status', old_value: 'won', new_value: 'lost' }], current: { ...request().current, status: 'lost' } });
    const trimmed = trimByNewer(older, fromCrm)!;
    expect(trimmed.changes.map((c) => c.field)).toEqual(['notes']);
    expect(trimmed.current.status).toBe('lost');
    expect(trimByNewer(request({ changes: [{ field: 'status', old_value: 'open', new_value: 'won' }] }), fromCrm)).toBeNull();
  });
});

describe('formats and backoff', () => {
  it('writes Google date times with an explicit offset, as documented', () => {
    expect(googleDateTime(new Date('2019-01-01T20:32:45.999Z'))).toBe('2019-01-01 20:32:45+00:00');
  });

  it('hashes the normalised email for Meta', () => {
    expect(hashEmail('  Ada@Example.COM ')).toBe(hashEmail('ada@example.com'));
    expect(hashEmail('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('backs off exponentially up to a cap, never sooner than asked', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1000, maxDelayMs: 10_000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(policy, n, null))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(retryDelayMs(policy, 1, 120_000)).toBe(120_000);
    expect(retryDelayMs(policy, 4, 500)).toBe(8000);
    expect(parseRetryAfter('120', AT)).toBe(120_000);
    expect(parseRetryAfter(new Date(AT.getTime() + 5000).toUTCString(), AT)).toBeGreaterThan(3000);
    expect(parseRetryAfter('soon', AT)).toBeNull();
  });
});

describe('planWriteback: CRM stages (deal milestones and lifecycle stages set in the CRM)', () => {
  const RULES = { send: [{ outcome: 'stage', stage: 'deal_won', value: 'sales_value' }, { outcome: 'stage', stage: 'marketing_qualified_lead', value: null }] };
  const META_STAGES: AdDestinationRow = { platform: 'meta_ads', workspace_id: 'w', settings: { pixel_id: '555', ...RULES } };
  const LINKEDIN_STAGES: AdDestinationRow = { platform: 'linkedin_ads', workspace_id: 'w', settings: { conversion_rule_id: '104', ...RULES } };
  const won = (over: Partial<OutcomeWritebackRequestedV1> = {}) => request({
    requested_by: 'crm:hubspot', changes: [],
    current: { ...request().current, sales_value: null, currency: 'EUR' },
    milestone: { milestone_id: 'hubspot:deal:77:deal_won', stage: 'deal_won', deal_id: 'd-77', amount: 4200, currency: 'USD' },
    ...over,
  });

  it('sends a deal milestone as its stage outcome, valued at the deal amount in the deal currency, and writes nothing to the CRM', () => {
    const plan = planWriteback(won(), AT, facts({ destinations: [META_STAGES, LINKEDIN_STAGES] }));
    expect(plan.rows.map((r) => r.target)).toEqual(['meta_ads', 'linkedin_ads']);
    expect(plan.crmHolds).toEqual([]);
    const meta = byTarget(plan.rows)['meta_ads']!;
    expect(meta).toMatchObject({ status: 'pending', sends: [{ key: 'stage:deal_won', value: 4200, currency: 'USD' }] });
    expect((meta.payload as { data: { event_id: string; custom_data: unknown }[] }).data[0]).toMatchObject({
      event_id: `${MESSAGE_EXAMPLES['outcome.writeback_requested'].conversion_id}:stage:deal_won`, custom_data: { value: 4200, currency: 'USD' },
    });
    // Sent once: a later request of the same milestone finds it.
    const again = planWriteback(won({ request_id: '1b2c3d4e-0000-4000-8000-000000000001' }), AT, facts({
      destinations: [META_STAGES], adSent: new Map([[sentKey('meta_ads', 'stage:deal_won'), { key: 'stage:deal_won', value: 4200, currency: 'USD' }]]),
    }));
    expect(byTarget(again.rows)['meta_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('already uploaded') });
    // A milestone no rule names, or a deal without an amount: nothing, or no value.
    expect(planWriteback(won({ milestone: { milestone_id: 'm', stage: 'deal_lost', deal_id: null, amount: 10, currency: 'USD' } }), AT, facts({ destinations: [META_STAGES] })).rows).toEqual([]);
    const noAmount = planWriteback(won({ milestone: { milestone_id: 'm', stage: 'deal_won', deal_id: null, amount: null, currency: null } }), AT, facts({ destinations: [META_STAGES] }));
    expect(byTarget(noAmount.rows)['meta_ads']).toMatchObject({ status: 'pending', sends: [{ key: 'stage:deal_won', value: null, currency: null }] });
    // Consent denied: nothing leaves.
    expect(byTarget(planWriteback(won({ ad_consent: 'denied' }), AT, facts({ destinations: [META_STAGES] })).rows)['meta_ads']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('consent') });
  });

  it('sends a lifecycle stage set in the CRM to the ad platforms and never back to the CRM', () => {
    const mql = request({ requested_by: 'crm:hubspot', changes: [{ field: 'lifecycle_stage_raw', old_value: 'lead', new_value: 'Marketing Qualified Lead' }] });
    const rows = byTarget(planWriteback(mql, AT, facts({ destinations: [LINKEDIN_STAGES] })).rows);
    expect(rows['crm']).toMatchObject({ status: 'skipped', detail: expect.stringContaining('came from the CRM') });
    expect(rows['linkedin_ads']).toMatchObject({ status: 'pending', sends: [{ key: 'stage:marketing_qualified_lead', value: null }] });
  });
});
