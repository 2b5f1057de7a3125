// Issue 24, finding 1: a key with automations:* alone must not read, through an alert, figures and
// contents it has no scope for. One test per path: the write and run refusals (which are what keeps
// a key from having figures mailed to itself), a run's subject, the alert's state, and deliveries.
import { AUTOMATIONS_ONLY, FULL_SCOPES, startHarness, type Harness, type Json } from '../../test/harness';

const narrow = { key: { id: 'narrow', scopes: [...AUTOMATIONS_ONLY] } };
const withScopes = (...extra: string[]) => ({ key: { id: 'some', scopes: [...AUTOMATIONS_ONLY, ...extra] } });
const MAILBOX = 'me@attacker.example';

const scheduleSpec = (over: Json = {}): Json => ({
  version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' },
  gather: { revenue: { metric: 'revenue', period: 'yesterday' } },
  compose: { subject: 'Revenue {{figures.revenue.value}}' },
  deliver: [{ channel: 'email', to: [MAILBOX] }],
  ...over,
});

describe('what an alert shows, by the key reading it (issue 24)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => h?.stop(), 60_000);
  beforeEach(() => {
    h.smtp.received.length = 0;
    h.metrics.fn = () => ({ revenue: 4321.5, conversions: 3 });
  });

  const detail = async (id: string, init: { key: { id: string; scopes: string[] } } = narrow): Promise<Json> => (await h.call('getAutomation', { params: { id }, ...init })).body.data;

  it('refuses to write a spec whose messages would show what the key cannot read, naming the scope', async () => {
    const refused = async (spec: Json, init: object = narrow) => h.problem('createAutomation', { body: { name: 'Leak', spec }, ...init });
    expect(await refused(scheduleSpec())).toMatchObject({ kind: 'insufficient-scope', status: 403, extra: { missing_scope: 'analytics:read' } });
    expect(await refused(scheduleSpec({ gather: { c: { funnel: '00000000-0000-4000-8000-000000000001' } }, compose: {} }), withScopes('analytics:read')))
      .toMatchObject({ kind: 'insufficient-scope', extra: { missing_scope: 'funnels:read' } });
    const events = (type: string): Json => ({ version: 1, trigger: { kind: 'event', events: [type] }, deliver: [{ channel: 'email', to: [MAILBOX] }] });
    expect(await refused(events('conversion.created'))).toMatchObject({ kind: 'insufficient-scope', extra: { missing_scope: 'conversions:read' } });
    expect(await refused(events('deal.stage_changed'), withScopes('conversions:read'))).toMatchObject({ kind: 'insufficient-scope', extra: { missing_scope: 'deals:read' } });
    expect(String((await refused(scheduleSpec())).detail)).toContain('analytics:read');
    // Nothing was stored, and no query was run for the refused spec.
    expect((await h.call('listAutomations')).body.data).toHaveLength(0);

    // A spec without figures needs nothing more; a patch that adds them does.
    const plain = await h.create({ name: 'Plain', spec: { version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' }, deliver: [{ channel: 'email', to: [MAILBOX] }] } });
    const id = String(plain['id']);
    expect((await h.call('getAutomation', { params: { id }, ...narrow })).body.data).toMatchObject({ output_scopes: [], redacted: null });
    expect(await h.problem('patchAutomation', { params: { id }, body: { spec: scheduleSpec() }, ...narrow })).toMatchObject({ kind: 'insufficient-scope', extra: { missing_scope: 'analytics:read' } });
    expect((await h.call('patchAutomation', { params: { id }, body: { name: 'Renamed' }, ...narrow })).body.data['name']).toBe('Renamed');
    // Written by a key with pii:read, an event alert shows personal fields unmasked: reading it needs pii:read too.
    const events2 = await h.create({ name: 'Sales', spec: events('conversion.created') });
    expect(events2['output_scopes']).toEqual(['conversions:read', 'pii:read']);
    const masked = await h.call('createAutomation', { body: { name: 'Sales, masked', spec: events('conversion.created') }, ...withScopes('conversions:read') });
    expect(masked.body.data['output_scopes']).toEqual(['conversions:read']);
    for (const a of (await h.call('listAutomations')).body.data as unknown as Json[]) await h.call('deleteAutomation', { params: { id: String(a['id']) } });
  });

  it('mailbox: a key cannot have figures mailed to itself by running an alert it may not read', async () => {
    const alert = await h.create({ name: 'Revenue', spec: scheduleSpec() });
    const id = String(alert['id']);
    const before = h.metrics.calls;
    expect(await h.problem('runAutomation', { params: { id }, body: { test: true }, ...narrow })).toMatchObject({ kind: 'insufficient-scope', extra: { missing_scope: 'analytics:read' } });
    // Nothing gathered, nothing queued, nothing sent.
    expect(h.metrics.calls).toBe(before);
    expect((await detail(id, { key: { id: 'full', scopes: [...FULL_SCOPES] } }))['runs']).toEqual([]);
    const events = await h.create({ name: 'Sales', spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: [MAILBOX] }] } });
    expect(await h.problem('runAutomation', { params: { id: String(events['id']) }, body: {}, ...withScopes('conversions:read') })).toMatchObject({ extra: { missing_scope: 'pii:read' } });
    await new Promise((r) => setTimeout(r, 200));
    expect(h.smtp.received).toHaveLength(0);
    // With the scope, it runs.
    expect((await h.call('runAutomation', { params: { id }, body: { test: true }, ...withScopes('analytics:read') })).status).toBe(200);
    const mail = (await h.smtp.waitFor(1))[0];
    expect(mail?.subject).toContain('€4,321.50');
    await h.call('deleteAutomation', { params: { id } });
    await h.call('deleteAutomation', { params: { id: String(events['id']) } });
  });

  it('run subject: redacted for a key without the scope, with what is missing named', async () => {
    const alert = await h.create({ name: 'Revenue', spec: scheduleSpec() });
    const id = String(alert['id']);
    await h.call('runAutomation', { params: { id }, body: {} });
    await h.smtp.waitFor(1);
    const full = await detail(id, { key: { id: 'full', scopes: [...FULL_SCOPES] } });
    expect((full['runs'] as Json[])[0]?.['subject']).toContain('€4,321.50');
    expect(full['redacted']).toBeNull();
    const seen = await detail(id);
    expect(JSON.stringify(seen)).not.toContain('4,321');
    expect((seen['runs'] as Json[])[0]).toMatchObject({ subject: null, compose_note: null, trigger: 'manual' });
    expect(seen['redacted']).toEqual({ missing_scopes: ['analytics:read'], fields: ['state.last_value', 'runs[].subject', 'runs[].compose_note', 'runs[].deliveries[].error'] });
    expect(seen['output_scopes']).toEqual(['analytics:read']);
    await h.call('deleteAutomation', { params: { id } });
  });

  it('state: a threshold alert\'s last value is redacted in the list and the detail', async () => {
    h.clock.now = new Date('2026-03-20T10:00:30.000Z');
    const alert = await h.create({
      name: 'Few conversions',
      spec: {
        version: 1, trigger: { kind: 'threshold', cron: '* * * * *' }, gather: { conversions: { metric: 'conversions', period: 'today' } },
        condition: { figure: 'conversions', op: 'lt', value: 1 }, deliver: [{ channel: 'email', to: [MAILBOX] }],
      },
    });
    const id = String(alert['id']);
    h.clock.now = new Date('2026-03-20T10:01:00.000Z');
    expect((await h.admin('POST', '/automations/tick')).body).toMatchObject({ evaluated: 1 });
    const full = await detail(id, { key: { id: 'full', scopes: [...FULL_SCOPES] } });
    expect((full['state'] as Json)['last_value']).toBe(3);
    expect(((await detail(id))['state'] as Json)['last_value']).toBeNull();
    const listed = ((await h.call('listAutomations', narrow)).body.data as unknown as Json[]).find((a) => a['id'] === id) as Json;
    expect((listed['state'] as Json)['last_value']).toBeNull();
    expect(listed['redacted']).toEqual({ missing_scopes: ['analytics:read'], fields: ['state.last_value'] });
    const fullList = ((await h.call('listAutomations')).body.data as unknown as Json[]).find((a) => a['id'] === id) as Json;
    expect((fullList['state'] as Json)['last_value']).toBe(3);
    await h.call('deleteAutomation', { params: { id } });
  });

  it('deliveries: a server\'s error text never shows (sanitised for all, withheld without the scope)', async () => {
    const alert = await h.create({ name: 'Revenue', spec: scheduleSpec() });
    const id = String(alert['id']);
    h.smtp.refuseNext(1, 550, '5.7.1 mx-internal.corp.example [10.1.2.3]:2525 refused "Revenue 4,321.50"');
    await h.call('runAutomation', { params: { id }, body: {} });
    const delivery = await h.until('the refused delivery', async () => {
      const d = ((await detail(id, { key: { id: 'full', scopes: [...FULL_SCOPES] } }))['runs'] as Json[])[0]?.['deliveries'] as Json[] | undefined;
      return d?.[0]?.['status'] === 'failed' ? d[0] : undefined;
    });
    expect(delivery['error']).toBe('permanent: SMTP server refused the message (550)');
    const narrowDelivery = (((await detail(id))['runs'] as Json[])[0]?.['deliveries'] as Json[])[0];
    expect(narrowDelivery).toMatchObject({ status: 'failed', error: null });
    await h.call('deleteAutomation', { params: { id } });
  });
});
