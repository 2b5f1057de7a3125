import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { messageValidator } from '@sightline/proto-schemas';
import { createBus } from './bus';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { defineModule } from './module';
import { startModules } from './runner';

describe('module runner', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-runner-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const namespace = `runner${Date.now()}`;
  const config = () => loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });

  it('stop() lets an in-flight RPC finish and reply before the stores close', async () => {
    const events: string[] = [];
    // Stands in as the attribution service so its RPC passes the product's schema checks.
    const slow = defineModule({
      name: 'attribution',
      needs: {},
      async create() {
        return {
          rpc: {
            'attribution.getMetrics': async () => {
              events.push('handler started');
              await new Promise((r) => setTimeout(r, 300));
              events.push('handler finished');
              return { status: 200, body: { ok: true } };
            },
          },
          async stop() {
            events.push('module stopped');
          },
        };
      },
    });
    const proc = await startModules({ config: config(), modules: [slow], logger: createLogger({ level: 'silent' }) });
    expect(proc.isReady()).toBe(true);
    const request = {
      operation: 'getMetrics',
      request_id: 'runner-test',
      workspace: { id: 'w', name: 'W', timezone: 'UTC', currency: 'USD', plan: 'free' },
      website: null,
      key: { id: 'k', scopes: [] },
      params: {},
      query: {},
      body: null,
      headers: {},
    };
    // The caller is another bus client, as a gateway in another process would be.
    const caller = await createBus({ namespace, validator: messageValidator, logger: createLogger({ level: 'silent' }) });
    const reply = caller.rpc('attribution.getMetrics', request, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 50));
    const stopped = proc.stop();
    expect(proc.isReady()).toBe(false);
    await expect(reply).resolves.toEqual({ status: 200, body: { ok: true } });
    await stopped;
    expect(events).toEqual(['handler started', 'handler finished', 'module stopped']);
    await caller.close();
  });

  it('a module that fails to start stops the process instead of limping on', async () => {
    const broken = defineModule({
      name: 'broken',
      needs: {},
      async create() {
        return { start: async () => Promise.reject(new Error('cannot start')) };
      },
    });
    await expect(startModules({ config: config(), modules: [broken], logger: createLogger({ level: 'silent' }) })).rejects.toThrow('cannot start');
  });
});
