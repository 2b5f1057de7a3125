// CRM write-backs due together go to a connector with a batch call in one call: the write-back
// part on PGlite and an in-process bus, a Salesforce connection to the stand-in org, outcomes
// queued by the consumer's code and worked in one round. Each row keeps its own answer: done with
// the fields written, or failed / dead with Salesforce's reason for that record alone.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createBus, createLogger, createOutbox, createStoreProvider, runSqlMigrations, serviceBus, type Bus, type SqlStore, type TypedEnvelope } from '@sightline/kit';
import { MESSAGE_EXAMPLES, messageValidator, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { seedOrg, startSalesforceServer, type SalesforceServer } from '../../test/salesforce-server';
import { ConnectionsRepo } from '../connections/connections.repo';
import { credentialsBox } from '../connections/credentials';
import { enqueueWriteback } from './enqueue';
import { writebackParts, type WritebackParts } from './writeback.parts';

const CLIENT = '3MVG9sightline.test.client';
const USER = 'integration@sightline.test';
const KEY = 'crm-batch-test-credentials-key-0123';

describe('CRM write-backs in one batch call (Salesforce sObject Collections)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let sf: SalesforceServer;
  let sql: SqlStore;
  let bus: Bus;
  let parts: WritebackParts;
  const websiteId = randomUUID();

  beforeAll(async () => {
    sf = await startSalesforceServer({ clientIds: [CLIENT], usernames: [USER], jwtPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    seedOrg(sf.org, { accounts: 5, contacts: 20, leads: 10, opportunities: 5, seed: 5, days: 10 });
    sf.org.declareField('Contact', 'Sightline_Sales_Value__c', 'currency');
    const logger = createLogger({ level: 'silent' });
    sql = await createStoreProvider({ logger }).sql(`crm_batch_${randomUUID().slice(0, 8)}`);
    await runSqlMigrations(sql, join(__dirname, '..', '..', 'migrations', 'postgres'));
    bus = await createBus({ url: `memory://crm-batch-${randomUUID()}`, validator: messageValidator, logger });
    const id = ConnectionsRepo.idOf(websiteId, 'salesforce');
    await new ConnectionsRepo(sql).save({
      id, workspaceId: randomUUID(), websiteId, provider: 'salesforce',
      sealed: credentialsBox(KEY).seal(id, { client_id: CLIENT, username: USER, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }),
      settings: { writeback: { Contact: { sales_value: 'Sightline_Sales_Value__c' }, Lead: { status: 'Status' } } },
    });
    parts = writebackParts({
      sql, outbox: createOutbox(sql, bus, logger), bus: serviceBus(bus, 'crm-sync'), logger,
      settings: { publicPort: 0, adminPort: 0, adminToken: 't', metricsToken: 't', publicUrl: 'http://localhost', rpcTimeoutMs: 2000, cursorSecret: 'crm-batch-cursor-secret', dataDir: '', embedded: true },
      options: { credentialsKey: KEY, providerUrls: { salesforce: sf.url } },
      writeback: { runOnArrival: false, policy: { maxAttempts: 3 } },
    });
  });

  afterAll(async () => {
    await parts?.stop();
    await bus?.close();
    await sf?.close();
  });

  const queue = async (request: OutcomeWritebackRequestedV1): Promise<void> => {
    const envelope = { id: randomUUID(), type: 'outcome.writeback_requested', source: request.requested_by, workspace_id: request.workspace_id, website_id: websiteId, occurred_at: new Date().toISOString(), payload: request };
    await enqueueWriteback({ sql, outbox: createOutbox(sql, bus, createLogger({ level: 'silent' })), maxAttempts: 3, now: () => new Date() }, envelope as unknown as TypedEnvelope<'outcome.writeback_requested'>);
  };
  const outcome = (email: string | null, changes: OutcomeWritebackRequestedV1['changes'], current: Partial<OutcomeWritebackRequestedV1['current']>): OutcomeWritebackRequestedV1 => ({
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    request_id: randomUUID(), conversion_id: randomUUID(), website_id: websiteId, email, requested_by: 'api:key1', identity_id: null,
    changes, current: { ...MESSAGE_EXAMPLES['outcome.writeback_requested'].current, ...current },
  });
  const rowOf = async (conversionId: string) =>
    (await sql.query<{ status: string; detail: string | null; last_error: string | null }>(`SELECT status, detail, last_error FROM writebacks WHERE conversion_id = $1::uuid AND target = 'crm'`, [conversionId])).rows[0];

  it('sends outcomes due together in one call and records each record\'s own answer', async () => {
    const contacts = sf.org.all('Contact').filter((c) => c['Email']);
    const [a, b] = [contacts[0]!, contacts[1]!];
    const lead = sf.org.all('Lead').find((l) => l['IsConverted'] !== true && l['Email'])!;
    sf.org.rejectWrite('Lead', String(lead['Id']), 'Status', 'Status cannot go back to Open');
    const sold = (email: string, value: number) => outcome(email, [{ field: 'sales_value', old_value: null, new_value: value }], { sales_value: value });
    const requests = [
      sold(String(a['Email']), 100),
      sold(String(b['Email']).toUpperCase(), 200),
      sold(String(a['Email']), 300), // the same Contact again: a later call, so its value stands
      outcome(String(lead['Email']), [{ field: 'status', old_value: null, new_value: 'Open - Not Contacted' }], { status: 'Open - Not Contacted' }),
      sold('nobody@nowhere.test', 50),
    ];
    for (const r of requests) await queue(r);
    const before = sf.calls.length;
    await parts.runDue();
    const calls = sf.calls.slice(before).filter((c) => c.endpoint !== 'token');
    // Two lookups by email (Contacts, then Leads for the rest) and two collection calls (the repeat of a).
    expect(calls.map((c) => c.endpoint)).toEqual(['query', 'query', 'collectionsUpdate', 'collectionsUpdate']);
    expect(sf.org.get('Contact', String(a['Id']))!['Sightline_Sales_Value__c']).toBe(300);
    expect(sf.org.get('Contact', String(b['Id']))!['Sightline_Sales_Value__c']).toBe(200);
    expect(await rowOf(requests[0]!.conversion_id)).toMatchObject({ status: 'done', detail: `written to salesforce record ${String(a['Id'])}: Sightline_Sales_Value__c` });
    expect(await rowOf(requests[1]!.conversion_id)).toMatchObject({ status: 'done' });
    expect(await rowOf(requests[3]!.conversion_id)).toMatchObject({ status: 'dead', detail: `permanent error: Salesforce refused the Lead ${String(lead['Id'])}: FIELD_CUSTOM_VALIDATION_EXCEPTION: Status cannot go back to Open (fields: Status)` });
    expect(await rowOf(requests[4]!.conversion_id)).toMatchObject({ status: 'dead', detail: 'permanent error: no Salesforce Contact or unconverted Lead has the email of this conversion' });
  });

  it('fails every row of the batch alike when the call as a whole fails, each to be retried', async () => {
    const contacts = sf.org.all('Contact').filter((c) => c['Email']).slice(2, 4);
    const requests = contacts.map((c, i) => outcome(String(c['Email']), [{ field: 'sales_value', old_value: null, new_value: 10 + i }], { sales_value: 10 + i }));
    for (const r of requests) await queue(r);
    sf.failNext({ status: 503, body: [{ errorCode: 'SERVER_UNAVAILABLE', message: 'Server temporarily unavailable' }] });
    await parts.runDue();
    for (const r of requests) expect(await rowOf(r.conversion_id)).toMatchObject({ status: 'failed', last_error: expect.stringContaining('SERVER_UNAVAILABLE') });
  });
});
