// Which platforms need the clicks of earlier visits, and what is filled in from them (pure parts
// of earlier-clicks.ts; the call to attribution is in conversions-back.test.ts).
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import type { AdDestinationRow } from './connection';
import { clickIdsFor, platformsMissingClicks } from './earlier-clicks';

const AT = new Date('2026-11-20T10:00:00.000Z');
const DEAL_WON = [{ outcome: 'stage', stage: 'deal_won', value: 'sales_value' }];
const destinations: AdDestinationRow[] = [
  { platform: 'google_ads', workspace_id: 'ws1', settings: { customer_id: '1234567890', conversion_action_id: '777', send: DEAL_WON } },
  { platform: 'meta_ads', workspace_id: 'ws1', settings: { pixel_id: '555000', send: DEAL_WON } },
  { platform: 'linkedin_ads', workspace_id: 'ws1', settings: { conversion_rule_id: '104012', send: DEAL_WON } },
];

function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    identity_id: 'person-1', click_ids: {}, ad_consent: null,
    changes: [{ field: 'lifecycle_stage_raw', old_value: 'opportunity', new_value: 'Deal Won' }],
    ...overrides,
  };
}

describe('earlier clicks', () => {
  it('asks for the platforms that would send and lack their click id', () => {
    expect(platformsMissingClicks(request(), AT, destinations)).toEqual(['google_ads', 'meta_ads', 'linkedin_ads']);
    // Any id of a platform's own counts: wbraid for Google, fbc or fbclid for Meta.
    expect(platformsMissingClicks(request({ click_ids: { wbraid: 'w', fbc: 'fb.1.1700000000000.x' } }), AT, destinations)).toEqual(['linkedin_ads']);
    expect(platformsMissingClicks(request({ click_ids: { gclid: 'g', fbclid: 'f', li_fat_id: 'l' } }), AT, destinations)).toEqual([]);
    // A blank id is no id.
    expect(platformsMissingClicks(request({ click_ids: { gclid: ' ', fbclid: 'f', li_fat_id: 'l' } }), AT, destinations)).toEqual(['google_ads']);
  });

  it('asks for nothing without an identity, with consent denied, when no rule sends, or for a spend-only account', () => {
    expect(platformsMissingClicks(request({ identity_id: null }), AT, destinations)).toEqual([]);
    expect(platformsMissingClicks(request({ ad_consent: 'denied' }), AT, destinations)).toEqual([]);
    expect(platformsMissingClicks(request({ ad_consent: 'granted' }), AT, destinations)).toHaveLength(3);
    expect(platformsMissingClicks(request({ changes: [{ field: 'notes', old_value: null, new_value: 'x' }] }), AT, destinations)).toEqual([]);
    const spendOnly: AdDestinationRow = { platform: 'linkedin_ads', workspace_id: 'ws1', settings: { ad_account_id: '5001' } };
    expect(platformsMissingClicks(request(), AT, [spendOnly])).toEqual([]);
    const broken: AdDestinationRow = { platform: 'meta_ads', workspace_id: 'ws1', settings: { pixel_id: 'not-a-number', send: DEAL_WON } };
    expect(platformsMissingClicks(request(), AT, [broken])).toEqual([]);
  });

  it('takes each platform\'s newest click, and turns a Meta click into fbc dated by the click', () => {
    const clicks = [
      { name: 'wbraid', value: 'w-new', occurred_at: '2026-11-10T00:00:00.000Z' },
      { name: 'fbclid', value: ' IwAR-1 ', occurred_at: '2026-11-05T08:30:00.000Z' },
      { name: 'gclid', value: 'g-old', occurred_at: '2026-10-01T00:00:00.000Z' },
      { name: 'msclkid', value: 'm', occurred_at: '2026-09-01T00:00:00.000Z' },
    ];
    expect(clickIdsFor(['google_ads', 'meta_ads', 'linkedin_ads'], clicks)).toEqual({
      wbraid: 'w-new',
      fbc: `fb.1.${Date.parse('2026-11-05T08:30:00.000Z')}.IwAR-1`,
    });
    expect(clickIdsFor(['linkedin_ads'], clicks)).toEqual({});
    expect(clickIdsFor(['google_ads'], [])).toEqual({});
  });
});
