// The module as the runner starts it: migrations from its own folder, the consumer bound on the
// in-process bus, the RPC answered across it, and a reply that conforms to ChangesResponse.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createLogger, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import { MESSAGE_EXAMPLES, openApiDocument, type ApiRequest, type ApiResponse } from '@sightline/proto-schemas';
import type { ChangesBody } from './changes.rpc';
import { CHANGE_TYPES } from './change-types';
import { createChangefeedModule } from './index';

const example = MESSAGE_EXAMPLES['conversion.created'];

function changesRequest(websiteId: string, query: Record<string, unknown> = {}): ApiRequest {
  return {
    operation: 'listChanges',
    request_id: 'module-test',
    workspace: { id: example.workspace_id, name: 'Acme', timezone: 'UTC', currency: 'EUR', plan: 'pro' },
    website: { id: websiteId, domain: 'acme.test', timezone: 'UTC', currency: 'EUR' },
    key: { id: 'k', scopes: ['conversions:read'] },
    params: {},
    query,
    body: null,
    headers: {},
  };
}

describe('changefeed module (embedded runner)', () => {
  let dataDir: string;
  let proc: RunningProcess;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-changefeed-module-'));
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `changefeed${Date.now()}` });
    proc = await startModules({ config, modules: [createChangefeedModule()], logger: createLogger({ level: 'silent' }) });
  }, 60_000);
  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const list = (websiteId: string, query: Record<string, unknown> = {}) => proc.bus.rpc<ApiResponse<ChangesBody>>('changefeed.listChanges', changesRequest(websiteId, query));

  it('records a published conversion.created once and answers it in a ChangesResponse', async () => {
    const websiteId = randomUUID();
    const payload = { ...example, website_id: websiteId, conversion_id: randomUUID() };
    const message = { type: 'conversion.created', id: randomUUID(), source: 'api:key-42', workspace_id: example.workspace_id, website_id: websiteId, payload };
    await proc.bus.publish(message);
    await proc.bus.publish(message); // redelivery
    let reply: ApiResponse<ChangesBody> | null = null;
    for (let attempt = 0; attempt < 100; attempt += 1) {
      reply = await list(websiteId);
      if (reply.body.changes.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 200));
    reply = await list(websiteId);
    expect(reply.body.changes).toHaveLength(1);
    expect(reply.body.changes[0]).toMatchObject({ id: message.id, type: 'conversion.created', source: 'api:key-42', object_type: 'contact', object_id: payload.conversion_id });
    expect(JSON.stringify(reply.body)).not.toContain(String(example.email));

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
    const validate = ajv.compile({ $ref: 'https://sightline.test/openapi.json#/components/schemas/ChangesResponse' });
    expect(validate(reply.body) ? [] : validate.errors).toEqual([]);
  });

  it('records every consumed change type from its catalog example, without personal data', async () => {
    const websiteId = randomUUID();
    const examples = MESSAGE_EXAMPLES as unknown as Record<string, Record<string, unknown>>;
    const types = CHANGE_TYPES;
    for (const type of types) {
      await proc.bus.publish({ type, id: randomUUID(), source: 'crm:hubspot', workspace_id: example.workspace_id, website_id: websiteId, payload: examples[type] });
    }
    let body: ChangesBody | null = null;
    for (let attempt = 0; attempt < 100; attempt += 1) {
      body = (await list(websiteId)).body;
      if (body.changes.length === types.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(body?.changes.map((c) => c.type).sort()).toEqual([...types].sort());
    for (const change of body?.changes ?? []) {
      expect(change.source).toBe('crm:hubspot');
      expect(change.object_id).toBeTruthy();
    }
    expect(JSON.stringify(body)).not.toMatch(/@/);
  });

  it('answers a tampered cursor with invalid-request across the bus', async () => {
    await expect(list(randomUUID(), { cursor: 'eyJzIjoiYSJ9.AAAA' })).rejects.toMatchObject({ problem: { kind: 'invalid-request', status: 400 } });
  });
});
