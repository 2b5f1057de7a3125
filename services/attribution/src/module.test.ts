// The module as the runner starts it: migrations from its own folder, consumers bound on the bus
// (messages checked against the catalog schemas), and a journey reply that conforms to the
// OpenAPI document's JourneyResponse.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createBus, createLogger, loadConfig, startModules, type Bus, type RunningProcess } from '@sightline/kit';
import { MESSAGE_EXAMPLES, messageValidator, openApiDocument, type ApiRequest, type ApiResponse } from '@sightline/proto-schemas';
import { createAttributionModule } from './index';

const batch = MESSAGE_EXAMPLES['events.classified'];
const website = batch.website;
const created = MESSAGE_EXAMPLES['conversion.created'];

function journeyRequest(id: string): ApiRequest {
  return {
    operation: 'getContactJourney',
    request_id: 'module-test',
    workspace: { id: website.workspace_id, name: 'Acme', timezone: website.timezone, currency: website.currency, plan: 'pro' },
    website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
    key: { id: 'k', scopes: ['conversions:read'] },
    params: { id },
    query: { days: 365, limit: 2000 },
    body: null,
    headers: {},
  };
}

describe('attribution module (embedded runner)', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let caller: Bus;
  const namespace = `attribution${Date.now()}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-attribution-module-'));
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });
    const logger = createLogger({ level: 'silent' });
    proc = await startModules({ config, modules: [createAttributionModule()], logger });
    caller = await createBus({ namespace, journalDir: join(dataDir, 'bus'), validator: messageValidator, logger });
  }, 60_000);
  afterAll(async () => {
    await caller?.close();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('consumes the catalog examples and answers a journey that conforms to the OpenAPI document', async () => {
    const scope = { workspace_id: website.workspace_id, website_id: website.id, source: 'test' };
    await caller.publishMany([
      { ...scope, type: 'events.classified', payload: batch },
      { ...scope, type: 'conversion.created', payload: created },
      { ...scope, type: 'identity.merged', payload: MESSAGE_EXAMPLES['identity.merged'] },
    ]);
    // Consumers run asynchronously: poll until the conversion is known.
    let reply: ApiResponse<{ data: unknown[]; synthetic: boolean }> | null = null;
    for (let attempt = 0; attempt < 100 && !reply; attempt += 1) {
      reply = await caller
        .rpc<ApiResponse<{ data: unknown[]; synthetic: boolean }>>('attribution.getContactJourney', journeyRequest(created.conversion_id))
        .catch(() => null);
      if (reply?.body.data.length === 0) reply = null;
      if (!reply) await new Promise((r) => setTimeout(r, 100));
    }
    expect(reply?.status).toBe(200);
    expect(reply?.body.synthetic).toBe(false);
    expect(reply?.body.data).toHaveLength(1);

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
    const validate = ajv.compile({ $ref: 'https://sightline.test/openapi.json#/components/schemas/JourneyResponse' });
    expect(validate(reply?.body) ? [] : validate.errors).toEqual([]);
  });

  it('rebuilds a website through the admin API, refusing bad input with problem documents', async () => {
    const admin = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const started = await admin('POST', '/attribution/rebuilds', { website_id: website.id, workspace_id: website.workspace_id });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ website_id: website.id, status: 'running' });
    const conflict = await admin('POST', '/attribution/rebuilds', { website_id: website.id, workspace_id: website.workspace_id });
    let job = started.body;
    if (conflict.status === 409) expect(String(conflict.body['type'])).toMatch(/\/conflict$/);
    else expect(conflict.status).toBe(202); // the first one had already finished
    for (let attempt = 0; attempt < 200 && job['status'] === 'running'; attempt += 1) {
      await new Promise((r) => setTimeout(r, 50));
      job = (await admin('GET', `/attribution/rebuilds/${String(started.body['id'])}`)).body;
    }
    expect(job).toMatchObject({ status: 'done', outcomes: 1, published: 0, error: null });
    expect(job['sessions']).toBeGreaterThanOrEqual(1);

    const bad = await admin('POST', '/attribution/rebuilds', { website_id: 'shop.example', workspace_id: website.workspace_id });
    expect(bad.status).toBe(400);
    expect(String(bad.body['type'])).toMatch(/\/invalid-request$/);
    expect(String(bad.body['remediation'])).toMatch(/sightline attribution rebuild/);
    const unknown = await admin('GET', `/attribution/rebuilds/${randomUUID()}`);
    expect(unknown.status).toBe(404);
  });

  it('answers an unknown contact with a not-found problem across the bus', async () => {
    await expect(caller.rpc('attribution.getContactJourney', journeyRequest(randomUUID()))).rejects.toMatchObject({
      problem: { kind: 'not-found', status: 404 },
    });
  });
});
