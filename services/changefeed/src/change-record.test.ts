import { MESSAGE_EXAMPLES, type Envelope } from '@sightline/proto-schemas';
import { changeFromEnvelope, objectOf } from './change-record';

const envelope = (type: string, payload: unknown, over: Partial<Envelope> = {}): Envelope => ({
  id: 'msg-1',
  type,
  version: 1,
  occurred_at: '2025-03-01T10:00:00.000Z',
  workspace_id: 'ws-1',
  website_id: 'site-1',
  source: 'api:key-7',
  payload,
  ...over,
});

describe('changeFromEnvelope', () => {
  it('keeps the source, names the contact and stores no personal data for conversion.created', () => {
    const created = { ...MESSAGE_EXAMPLES['conversion.created'], email: 'jane@example.com', phone: '+4915112345678', properties: { plan: 'pro', email: 'x@y.z' } };
    const change = changeFromEnvelope(envelope('conversion.created', created));
    expect(change).toMatchObject({ message_id: 'msg-1', website_id: 'site-1', source: 'api:key-7', object_type: 'contact', object_id: created.conversion_id });
    const text = JSON.stringify(change?.data);
    expect(text).not.toMatch(/jane|4915112345678|x@y\.z|anonymous_id|properties/);
    expect(change?.data).toMatchObject({ event_type: created.event_type, revenue: created.revenue, currency: created.currency });
  });

  it('keeps the field changes of a contact change, without the values of notes', () => {
    const base = { conversion_id: 'c1', website_id: 'site-1', workspace_id: 'ws-1', identity_id: 'i1', changed_at: '2025-03-01T10:00:00.000Z' };
    const value = changeFromEnvelope(envelope('conversion.value_changed', {
      ...base, conversion_occurred_at: '2025-02-01T00:00:00.000Z', sales_value: 12000, quote_value: null, currency: 'EUR',
      changes: [{ field: 'sales_value', old_value: null, new_value: 12000 }],
    }));
    expect(value).toMatchObject({ object_type: 'contact', object_id: 'c1' });
    expect(value?.data).toMatchObject({ sales_value: 12000, changes: [{ field: 'sales_value', old_value: null, new_value: 12000 }] });
    const updated = changeFromEnvelope(envelope('conversion.updated', {
      ...base,
      changes: [{ field: 'notes', old_value: null, new_value: 'Called Jane Doe on +49 151 1234' }, { field: 'is_spam', old_value: false, new_value: true }],
    }));
    expect(updated?.data['changes']).toEqual([{ field: 'notes' }, { field: 'is_spam', old_value: false, new_value: true }]);
  });

  it('keeps old and new values but drops those of a personal field', () => {
    const value = changeFromEnvelope(envelope('conversion.value_changed', { conversion_id: 'c1', field: 'sales_value', old: { value: 10 }, new: { value: 12 }, reason: 'crm' }));
    expect(value?.data).toEqual({ field: 'sales_value', old: { value: 10 }, new: { value: 12 }, reason: 'crm' });
    const personal = changeFromEnvelope(envelope('conversion.updated', { conversion_id: 'c1', field: 'email', old_value: 'a@b.co', new_value: 'c@d.co', reason: 'api' }));
    expect(personal?.data).toEqual({ field: 'email', reason: 'api' });
  });

  it('falls back to the first *_id field, ignoring context ids', () => {
    expect(objectOf({ website_id: 'w', pipeline_id: 'p1', stage_id: 's1' })).toEqual({ object_type: null, object_id: 'p1', field: 'pipeline_id' });
    expect(objectOf({ deal_id: 'd1', stage: 'won' })).toMatchObject({ object_type: 'deal', object_id: 'd1' });
    expect(objectOf({ stage: 'won' })).toEqual({ object_type: null, object_id: null, field: null });
  });

  it('takes the website from the payload when the envelope has none, and gives up without one', () => {
    expect(changeFromEnvelope(envelope('stage.changed', { website_id: 'site-2', conversion_id: 'c' }, { website_id: null }))?.website_id).toBe('site-2');
    expect(changeFromEnvelope(envelope('stage.changed', { conversion_id: 'c' }, { website_id: null }))).toBeNull();
  });

  it('keeps the payload small: long text cut, nesting one level deep', () => {
    const change = changeFromEnvelope(envelope('funnel.updated', { funnel_id: 'f', title: 'x'.repeat(1000), spec: { steps: [1, 2], deep: { a: 1 } } }));
    expect(String(change?.data['title'])).toHaveLength(256);
    expect(change?.data['spec']).toEqual({});
  });
});
