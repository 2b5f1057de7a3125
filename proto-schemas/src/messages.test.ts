import { MESSAGE_EXAMPLES } from './message-examples';
import { MESSAGE_TYPES, messageCatalog } from './messages';
import { messageValidator, type Envelope } from './validator';

function envelope(type: string, payload: unknown, overrides: Partial<Envelope> = {}): Envelope {
  return {
    id: 'b9f0c3a2-5d1e-4c6f-8a7b-1e2d3c4b5a69',
    type,
    version: 1,
    occurred_at: '2025-03-01T10:00:00.000Z',
    workspace_id: '2f1d6c1e-8a55-4a53-9a3b-0b7f8e2f4d11',
    website_id: null,
    source: 'gateway',
    payload,
    ...overrides,
  };
}

function payloadSchema(type: keyof typeof messageCatalog): { properties: Record<string, unknown>; required: string[] } {
  const schema = messageCatalog[type].schema as { properties: { payload: { properties: Record<string, unknown>; required: string[] } } };
  return schema.properties.payload;
}

describe('message catalog', () => {
  it('covers every message type', () => {
    expect(MESSAGE_TYPES.sort()).toEqual([
      'ads.report_imported',
      'automation.created',
      'automation.deleted',
      'automation.ran',
      'automation.updated',
      'conversion.attributed',
      'conversion.created',
      'conversion.updated',
      'conversion.value_changed',
      'crm.members_synced',
      'deal.created',
      'deal.stage_changed',
      'events.classified',
      'funnel.created',
      'funnel.deleted',
      'funnel.updated',
      'gateway.key_created',
      'gateway.key_revoked',
      'gateway.workspace_created',
      'identity.merged',
      'ingest.batch_received',
      'milestone.reached',
      'outcome.writeback_requested',
      'outcome.writeback_updated',
      'stage.changed',
      'store.orders_imported',
    ]);
  });

  it.each(MESSAGE_TYPES)('%s: file, $id, version and type agree', (type) => {
    const entry = messageCatalog[type];
    const [domain, name] = type.split('.');
    expect(entry.schema.$id).toBe(`https://sightline.dev/schemas/${domain}/${name}.v${entry.version}.schema.json`);
    expect(entry.schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    const props = entry.schema['properties'] as Record<string, { const?: unknown }>;
    expect(props['type']?.const).toBe(type);
    expect(props['version']?.const).toBe(entry.version);
    expect(entry.description.length).toBeGreaterThan(10);
  });

  it.each(MESSAGE_TYPES)('%s: the TypeScript example has exactly the schema fields and validates', (type) => {
    const example = MESSAGE_EXAMPLES[type];
    const schema = payloadSchema(type);
    expect(Object.keys(example).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(messageValidator.validateEnvelope(envelope(type, example))).toBeNull();
  });

  it.each(MESSAGE_TYPES)('%s: refuses an unknown payload field', (type) => {
    const reason = messageValidator.validateEnvelope(envelope(type, { ...MESSAGE_EXAMPLES[type], secret: 'x' }));
    expect(reason).toMatch(/secret/);
  });

  it('contact change messages refuse an empty change list and a field of another message', () => {
    const valueChanged = MESSAGE_EXAMPLES['conversion.value_changed'];
    expect(messageValidator.validateEnvelope(envelope('conversion.value_changed', { ...valueChanged, changes: [] }))).toMatch(/changes/);
    const wrongField = [{ field: 'status', old_value: null, new_value: 'won' }];
    expect(messageValidator.validateEnvelope(envelope('conversion.value_changed', { ...valueChanged, changes: wrongField }))).toMatch(/field/);
    const attributed = MESSAGE_EXAMPLES['conversion.attributed'];
    expect(messageValidator.validateEnvelope(envelope('conversion.attributed', { ...attributed, first_touch: null, last_touch: null }))).toBeNull();
    expect(messageValidator.validateEnvelope(envelope('conversion.attributed', { ...attributed, first_touch: { channel: 'Direct' } }))).toMatch(/occurred_at/);
  });

  it('never carries a key secret', () => {
    const fields = Object.keys(payloadSchema('gateway.key_created').properties);
    expect(fields.filter((f) => /secret|hash|plaintext|token/.test(f))).toEqual([]);
  });

  it('refuses bad envelopes with a reason', () => {
    const ok = MESSAGE_EXAMPLES['gateway.key_revoked'];
    expect(messageValidator.validateEnvelope(envelope('gateway.key_revoked', ok, { occurred_at: 'yesterday' }))).toMatch(/occurred_at/);
    expect(messageValidator.validateEnvelope(envelope('gateway.key_revoked', ok, { version: 2 }))).toMatch(/v2/);
    expect(messageValidator.validateEnvelope(envelope('gateway.nope', ok))).toMatch(/unknown message type/);
    expect(messageValidator.validateEnvelope(envelope('gateway.key_revoked', ok, { workspace_id: null }))).toMatch(/workspace_id/);
    const { reason: _, ...missing } = ok;
    expect(messageValidator.validateEnvelope(envelope('gateway.key_revoked', missing))).toMatch(/reason/);
    expect(messageValidator.validateEnvelope({ ...envelope('gateway.key_revoked', ok), extra: 1 } as Envelope)).toMatch(/extra/);
  });
});
