import { MESSAGE_EXAMPLES, type Envelope } from '@sightline/proto-schemas';
import { changeFromEnvelope } from './change-record';

const envelope = (type: string, payload: unknown, source = 'crm:hubspot'): Envelope => ({
  id: `msg-${type}`,
  type,
  version: 1,
  occurred_at: '2026-05-01T00:00:00.000Z',
  workspace_id: 'ws-1',
  website_id: 'site-1',
  source,
  payload,
});

describe('deal changes', () => {
  it('deal.created names the deal and its stage as GET /deals does, without emails or the deal name', () => {
    const created = MESSAGE_EXAMPLES['deal.created'];
    const change = changeFromEnvelope(envelope('deal.created', created));
    expect(change).toMatchObject({
      type: 'deal.created', source: 'crm:hubspot', website_id: 'site-1', object_type: 'deal', object_id: created.deal_id,
      occurred_at: created.occurred_at,
    });
    expect(change?.data).toEqual({
      crm_id: created.crm_id, provider: 'hubspot', amount: 12000, currency: 'EUR', pipeline: 'default',
      stage: { id: 'appointmentscheduled', name: 'Appointment scheduled', normalized_bucket: 'open' },
      company_id: created.company_id, contact_count: 1,
    });
    expect(JSON.stringify(change)).not.toMatch(/ada@example\.com|Acme renewal/);
  });

  it('deal.stage_changed carries the stage left and the stage reached, and the source of the change', () => {
    const changed = MESSAGE_EXAMPLES['deal.stage_changed'];
    const change = changeFromEnvelope(envelope('deal.stage_changed', changed, 'import'));
    expect(change).toMatchObject({ type: 'deal.stage_changed', source: 'import', object_type: 'deal', object_id: changed.deal_id, occurred_at: changed.occurred_at });
    expect(change?.data).toMatchObject({
      stage: { id: 'closedwon', name: 'Closed won', normalized_bucket: 'won' },
      old_stage: { id: 'appointmentscheduled', name: 'Appointment scheduled', normalized_bucket: 'open' },
    });
  });

  it('falls back to the envelope time when the payload has no valid time', () => {
    const change = changeFromEnvelope(envelope('deal.created', { ...MESSAGE_EXAMPLES['deal.created'], occurred_at: 'soon' }));
    expect(change?.occurred_at).toBe('2026-05-01T00:00:00.000Z');
  });
});
