// CRM lifecycle stages reaching the ledger: contacts and the real changefeed run in one embedded
// process (PGlite, in-process bus), crm-sync's milestone.reached is published as crm-sync would,
// and a stand-in recorder sees what contacts announces.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus, createLogger, defineStandIn, loadConfig, startModules, type Bus, type Envelope, type RunningProcess, type TypedEnvelope } from '@sightline/kit';
import {
  MESSAGE_EXAMPLES,
  messageValidator,
  type ApiRequest,
  type ApiResponse,
  type ConversionCreatedV1,
  type MilestoneReachedV1,
  type OutcomeWritebackRequestedV1,
  type StageChangedV1,
} from '@sightline/proto-schemas';
import { createChangefeedModule } from '@sightline/service-changefeed';
import { CRM_STAGE_REASON, crmStageUpdate, dealMilestone, milestoneRequestId } from './crm-stage';
import { createContactsModule } from './index';
import { requestsWriteback } from './outcome-write';

const WORKSPACE = { id: randomUUID(), name: 'Shop', timezone: 'UTC', currency: 'EUR', plan: 'pro' as const };
const SITE = { id: randomUUID(), domain: 'shop.test', timezone: 'UTC', currency: 'EUR' };
const OTHER_SITE = { id: randomUUID(), domain: 'other.test', timezone: 'UTC', currency: 'EUR' };
type Site = typeof SITE;
type Body = { data: Record<string, unknown> };
type FeedBody = { changes: { id: string; type: string; source: string; object_id?: string; data: Record<string, unknown> }[] };

function request(operation: string, site: Site, init: Partial<ApiRequest> = {}): ApiRequest {
  return {
    operation,
    request_id: 'crm-stage-test',
    workspace: WORKSPACE,
    website: site,
    key: { id: 'key1', scopes: ['conversions:read', 'conversions:write', 'pii:read'] },
    params: {},
    query: {},
    body: null,
    headers: {},
    ...init,
  };
}

const milestoneEnvelope = (site: Site, email: string, over: Partial<MilestoneReachedV1> = {}, source = 'crm:hubspot') => ({
  id: randomUUID(),
  type: 'milestone.reached',
  source,
  workspace_id: WORKSPACE.id,
  website_id: site.id,
  payload: {
    ...MESSAGE_EXAMPLES['milestone.reached'],
    milestone_id: `hubspot:contact:${randomUUID()}:marketingqualifiedlead`,
    website_id: site.id,
    workspace_id: WORKSPACE.id,
    stage: 'marketingqualifiedlead',
    stage_raw: 'marketingqualifiedlead',
    subject: 'contact',
    email,
    deal_id: null,
    amount: null,
    currency: null,
    ...over,
  } satisfies MilestoneReachedV1,
});

describe('milestone.reached → crm lifecycle stage on the ledger', () => {
  it('reads the update from a contact milestone only', () => {
    const envelope = { ...milestoneEnvelope(SITE, ' Ada@Shop.test '), version: 1, occurred_at: new Date().toISOString() } as TypedEnvelope<'milestone.reached'>;
    expect(crmStageUpdate(envelope)).toEqual({ websiteId: SITE.id, email: 'ada@shop.test', lifecycleStage: 'marketingqualifiedlead', source: 'crm:hubspot' });
    const withPayload = (over: Partial<MilestoneReachedV1>) => ({ ...envelope, payload: { ...envelope.payload, ...over } });
    // Without the CRM's own value, the stage key stands in.
    expect(crmStageUpdate(withPayload({ stage_raw: null, stage: 'customer' }))?.lifecycleStage).toBe('customer');
    expect(crmStageUpdate(withPayload({ subject: 'deal' }))).toBeNull();
    expect(crmStageUpdate(withPayload({ subject: undefined }))).toBeNull();
    expect(crmStageUpdate(withPayload({ email: null }))).toBeNull();
    expect(crmStageUpdate(withPayload({ email: '  ' }))).toBeNull();
  });

  it('requests write-back for changes made in Sightline and in the CRM (crm-sync sends the latter to ad platforms only), never for imports', () => {
    expect(requestsWriteback('api:key1')).toBe(true);
    expect(requestsWriteback('crm:hubspot')).toBe(true);
    expect(requestsWriteback('crm:salesforce')).toBe(true);
    expect(requestsWriteback('import')).toBe(false);
  });

  it('reads a deal milestone as a request for the ad platforms for each of its contacts, never from an import', () => {
    const envelope = { ...milestoneEnvelope(SITE, 'ada@shop.test', { subject: 'deal', stage: 'deal_won', stage_raw: null, deal_id: 'd-1', amount: 5000, currency: 'USD', contact_emails: [' Ada@Shop.test', 'bob@shop.test', 'ada@shop.test'] }), version: 1, occurred_at: new Date().toISOString() } as TypedEnvelope<'milestone.reached'>;
    expect(dealMilestone(envelope)).toMatchObject({ websiteId: SITE.id, emails: ['ada@shop.test', 'bob@shop.test'], milestone: { stage: 'deal_won', deal_id: 'd-1', amount: 5000, currency: 'USD' }, source: 'crm:hubspot' });
    // Without contact_emails, the single email.
    expect(dealMilestone({ ...envelope, payload: { ...envelope.payload, contact_emails: undefined } })?.emails).toEqual(['ada@shop.test']);
    expect(dealMilestone({ ...envelope, source: 'import' })).toBeNull();
    expect(dealMilestone({ ...envelope, payload: { ...envelope.payload, subject: 'contact' } })).toBeNull();
    expect(milestoneRequestId('m1', 'c1')).toBe(milestoneRequestId('m1', 'c1'));
    expect(milestoneRequestId('m1', 'c1')).not.toBe(milestoneRequestId('m1', 'c2'));
  });
});

describe('contacts with changefeed (embedded runner): CRM lifecycle stages', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let caller: Bus;
  const announced: Envelope[] = [];

  const recorder = defineStandIn({
    name: 'recorder',
    needs: {},
    async create() {
      const record = async (e: Envelope) => void announced.push(e);
      return { consumers: { 'stage.changed': record, 'conversion.value_changed': record, 'conversion.updated': record, 'outcome.writeback_requested': record } };
    },
  });

  const get = async (site: Site, id: string) => (await caller.rpc<ApiResponse<Body>>('contacts.getContact', request('getContact', site, { params: { id } }))).body.data;
  const patch = (site: Site, id: string, body: unknown) => caller.rpc<ApiResponse<Body>>('contacts.patchContact', request('patchContact', site, { params: { id }, body }));
  const feed = async (site: Site) =>
    (await caller.rpc<ApiResponse<FeedBody>>('changefeed.listChanges', request('listChanges', site, { query: { types: ['stage.changed'] } }))).body.changes;
  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const settle = () => new Promise((r) => setTimeout(r, 300));
  const publishConversion = async (site: Site, email: string | null, over: Partial<ConversionCreatedV1> = {}): Promise<string> => {
    const payload: ConversionCreatedV1 = { ...MESSAGE_EXAMPLES['conversion.created'], conversion_id: randomUUID(), website_id: site.id, workspace_id: WORKSPACE.id, email, ...over };
    await caller.publish({ type: 'conversion.created', source: 'ingest', workspace_id: WORKSPACE.id, website_id: site.id, payload });
    await waitFor('the conversion to be filed', () => get(site, payload.conversion_id).then(() => true, () => undefined));
    return payload.conversion_id;
  };
  const stageOf = async (site: Site, id: string) => (await get(site, id))['lifecycle_stage_raw'];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-contacts-crm-stage-'));
    const namespace = `contactscrm${Date.now()}`;
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });
    const logger = createLogger({ level: 'silent' });
    proc = await startModules({ config, modules: [createContactsModule(), createChangefeedModule(), recorder], logger });
    caller = await createBus({ namespace, journalDir: join(dataDir, 'bus'), validator: messageValidator, logger });
  }, 60_000);

  afterAll(async () => {
    await caller?.close();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sets the stage on every conversion with the email, announces it as crm:<provider>, requests a write-back as crm:<provider>, and a repeat changes nothing', async () => {
    const first = await publishConversion(SITE, 'Ada@Shop.test');
    const second = await publishConversion(SITE, 'ada@shop.test');
    const someoneElse = await publishConversion(SITE, 'bob@shop.test');
    const elsewhere = await publishConversion(OTHER_SITE, 'ada@shop.test');
    const historyBefore = (await get(SITE, first))['value_history'];
    announced.length = 0;

    const milestone = milestoneEnvelope(SITE, 'ada@shop.test');
    await caller.publish(milestone);
    await waitFor('both conversions to take the stage', async () =>
      (await stageOf(SITE, first)) === 'marketingqualifiedlead' && (await stageOf(SITE, second)) === 'marketingqualifiedlead' ? true : undefined);
    await waitFor('two stage.changed and two requests', async () => (announced.length >= 4 ? announced : undefined));
    await settle();
    const changed = announced.filter((e) => e.type === 'stage.changed');

    expect(announced.map((e) => e.type).sort()).toEqual(['outcome.writeback_requested', 'outcome.writeback_requested', 'stage.changed', 'stage.changed']);
    expect(announced.every((e) => e.source === 'crm:hubspot')).toBe(true);
    // The request is the CRM's own (crm-sync sends it to ad platforms, never back to the CRM).
    for (const e of announced.filter((m) => m.type === 'outcome.writeback_requested')) {
      expect(e.payload).toMatchObject({ requested_by: 'crm:hubspot', changes: [{ field: 'lifecycle_stage_raw', old_value: null, new_value: 'marketingqualifiedlead' }] });
    }
    expect(changed.map((e) => (e.payload as StageChangedV1).conversion_id).sort()).toEqual([first, second].sort());
    for (const e of changed) {
      expect((e.payload as StageChangedV1).changes).toEqual([{ field: 'lifecycle_stage_raw', old_value: null, new_value: 'marketingqualifiedlead' }]);
    }
    // The other person and the other website's conversion of the same email are untouched.
    expect(await stageOf(SITE, someoneElse)).toBeNull();
    expect(await stageOf(OTHER_SITE, elsewhere)).toBeNull();
    // The value history holds sales_value / quote_value / currency only, exactly as for a PATCH of this field.
    const detail = await get(SITE, first);
    expect(detail['value_history']).toEqual(historyBefore);
    expect(JSON.stringify(detail['value_history'])).not.toContain(CRM_STAGE_REASON);

    // The change feed keeps who made the change.
    const entries = await waitFor('the feed entries', async () => {
      const changes = await feed(SITE);
      return changes.length >= 2 ? changes : undefined;
    });
    expect(entries.map((c) => [c.source, c.object_id]).sort()).toEqual([['crm:hubspot', first], ['crm:hubspot', second]].sort());
    expect(entries[0]?.data['changes']).toEqual([{ field: 'lifecycle_stage_raw', old_value: null, new_value: 'marketingqualifiedlead' }]);
    expect(await feed(OTHER_SITE)).toEqual([]);

    // A redelivery, and the same stage announced again, change and publish nothing.
    const updatedAt = detail['updated_at'];
    announced.length = 0;
    await caller.publish(milestone);
    await caller.publish(milestoneEnvelope(SITE, 'ADA@shop.test'));
    await settle();
    expect(announced).toEqual([]);
    expect((await get(SITE, first))['updated_at']).toBe(updatedAt);
    expect(await feed(SITE)).toHaveLength(2);
  });

  it('applies a run of stages in order, leaves deal milestones off the ledger, and requests no write-back for an import', async () => {
    const carol = await publishConversion(SITE, 'carol@shop.test');
    announced.length = 0;

    await caller.publishMany([
      milestoneEnvelope(SITE, 'carol@shop.test', { stage: 'lead', stage_raw: 'lead' }),
      milestoneEnvelope(SITE, 'carol@shop.test', { stage: 'sales_qualified_lead', stage_raw: 'Sales Qualified Lead' }),
      // A deal milestone and one that does not say what reached the stage: not a lifecycle stage.
      milestoneEnvelope(SITE, 'carol@shop.test', { stage: 'deal_won', stage_raw: null, subject: 'deal', contact_emails: ['carol@shop.test'] }),
      milestoneEnvelope(SITE, 'carol@shop.test', { stage: 'deal_lost', stage_raw: null, subject: null }),
      // Without the CRM's own value the stage key is written; an import is a CRM source too.
      milestoneEnvelope(SITE, 'carol@shop.test', { stage: 'customer', stage_raw: null }, 'import'),
    ]);
    await waitFor('three stage.changed', async () => (announced.filter((e) => e.type === 'stage.changed').length >= 3 ? true : undefined));
    await settle();
    const changed = announced.filter((e) => e.type === 'stage.changed');
    // Requests: the two CRM stages, and the deal milestone (carried for the ad platforms); none for the import nor the milestone without a subject.
    const requests = announced.filter((e) => e.type === 'outcome.writeback_requested').map((e) => e.payload as OutcomeWritebackRequestedV1);
    expect(requests.map((r) => [r.requested_by, r.milestone?.stage ?? null, r.changes.map((c) => c.new_value)])).toEqual([
      ['crm:hubspot', null, ['lead']],
      ['crm:hubspot', null, ['Sales Qualified Lead']],
      ['crm:hubspot', 'deal_won', []],
    ]);
    expect(await stageOf(SITE, carol)).toBe('customer');
    expect(changed.map((e) => [e.type, e.source, (e.payload as StageChangedV1).changes[0]?.old_value, (e.payload as StageChangedV1).changes[0]?.new_value])).toEqual([
      ['stage.changed', 'crm:hubspot', null, 'lead'],
      ['stage.changed', 'crm:hubspot', 'lead', 'Sales Qualified Lead'],
      ['stage.changed', 'import', 'Sales Qualified Lead', 'customer'],
    ]);

    // The same field set through the API is written back as before.
    announced.length = 0;
    await patch(SITE, carol, { lifecycle_stage_raw: 'evangelist' });
    await waitFor('the PATCH messages', async () => (announced.length >= 2 ? true : undefined));
    await settle();
    expect(announced.map((e) => [e.type, e.source]).sort()).toEqual([['outcome.writeback_requested', 'api:key1'], ['stage.changed', 'api:key1']]);
  });

  it('requests the ad-platform send of a CRM deal milestone once per contact of the deal, for the conversion holding click ids, the same request on redelivery', async () => {
    const clicked = await publishConversion(SITE, 'dana@shop.test', { occurred_at: new Date(Date.now() - 3_600_000).toISOString(), properties: { click_ids: { gclid: 'g-dana', fbclid: 'fb-dana' } } });
    const later = await publishConversion(SITE, 'dana@shop.test', { occurred_at: new Date().toISOString(), properties: {} });
    const erin = await publishConversion(SITE, 'erin@shop.test', { properties: {} });
    const before = await get(SITE, clicked);
    announced.length = 0;
    const won = milestoneEnvelope(SITE, 'dana@shop.test', {
      milestone_id: `hubspot:deal:${randomUUID()}:deal_won`, stage: 'deal_won', stage_raw: null, subject: 'deal', deal_id: 'deal-9', amount: 5000, currency: 'USD',
      occurred_at: '2026-11-20T10:00:00.000Z', contact_emails: ['dana@shop.test', 'erin@shop.test', 'nobody@shop.test'],
    });
    await caller.publish(won);
    const requests = await waitFor('two requests', async () => (announced.length >= 2 ? announced.map((e) => e.payload as OutcomeWritebackRequestedV1) : undefined));
    await settle();
    expect(announced.map((e) => [e.type, e.source])).toEqual([['outcome.writeback_requested', 'crm:hubspot'], ['outcome.writeback_requested', 'crm:hubspot']]);
    expect(requests.map((r) => r.conversion_id).sort()).toEqual([clicked, erin].sort());
    expect(requests.map((r) => r.conversion_id)).not.toContain(later);
    const dana = requests.find((r) => r.conversion_id === clicked)!;
    expect(dana).toMatchObject({
      requested_by: 'crm:hubspot', changes: [], email: 'dana@shop.test', click_ids: { gclid: 'g-dana', fbclid: 'fb-dana' },
      milestone: { milestone_id: won.payload.milestone_id, stage: 'deal_won', deal_id: 'deal-9', amount: 5000, currency: 'USD' },
    });
    expect(dana.request_id).toBe(milestoneRequestId(won.payload.milestone_id, clicked));
    // The ledger is untouched: a deal stage is not a field of the conversion.
    expect((await get(SITE, clicked))['updated_at']).toBe(before['updated_at']);

    // A redelivery yields the same requests (crm-sync records a request id once); an import none.
    announced.length = 0;
    await caller.publish({ ...won, id: randomUUID() });
    await waitFor('the repeated requests', async () => (announced.length >= 2 ? true : undefined));
    expect(announced.map((e) => (e.payload as OutcomeWritebackRequestedV1).request_id).sort()).toEqual(requests.map((r) => r.request_id).sort());
    announced.length = 0;
    await caller.publish(milestoneEnvelope(SITE, 'dana@shop.test', { ...won.payload, milestone_id: 'import:deal:x:deal_won' }, 'import'));
    await settle();
    expect(announced).toEqual([]);
  });
});
