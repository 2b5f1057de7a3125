import { listOperations } from './openapi/index';
import { RPC_METHODS, rpcCatalog, type ApiRequest } from './rpc';
import { messageValidator } from './validator';

function request(operation: string, overrides: Partial<ApiRequest> = {}): ApiRequest {
  return {
    operation,
    request_id: 'req_1',
    workspace: { id: 'w1', name: 'Acme', timezone: 'Europe/Berlin', currency: 'EUR', plan: 'pro' },
    website: { id: 's1', domain: 'acme.example', timezone: 'Europe/Berlin', currency: 'EUR' },
    key: { id: 'k3v9q2m8x1ab', scopes: ['analytics:read'] },
    params: {},
    query: { metrics: ['visitors'], limit: 50 },
    body: null,
    headers: {},
    ...overrides,
  };
}

describe('RPC catalog', () => {
  it('has one method per non-gateway canonical operation, matching the typed list', () => {
    expect(Object.keys(rpcCatalog).sort()).toEqual([...RPC_METHODS].sort());
    for (const [method, entry] of Object.entries(rpcCatalog)) {
      // Internal methods (no public operation) are named by their service and verb.
      if (entry.operationId === null) expect(method.startsWith(`${entry.service}.`)).toBe(true);
      else expect(method).toBe(`${entry.service}.${entry.operationId}`);
    }
  });

  it('routes legacy aliases to their canonical method', () => {
    const legacy = listOperations().filter((o) => o.operation.deprecated);
    expect(legacy.length).toBeGreaterThan(0);
    for (const { operation } of legacy) expect(RPC_METHODS).toContain(operation['x-sightline-rpc']);
  });

  it('accepts a well-formed request and response', () => {
    expect(messageValidator.validateRpcRequest('attribution.getMetrics', request('getMetrics'))).toBeNull();
    expect(messageValidator.validateRpcRequest('contacts.patchContact', request('patchContact', {
      params: { id: 'c1' }, body: { status: 'won' }, headers: { idempotency_key: 'abc' }, website: null,
    }))).toBeNull();
    expect(messageValidator.validateRpcResponse('attribution.getMetrics', { status: 200, body: { data: [] } })).toBeNull();
    expect(messageValidator.validateRpcResponse('attribution.getMetrics', { status: 200, body: null, headers: { 'X-A': '1' } })).toBeNull();
  });

  it('refuses malformed requests and responses with a reason', () => {
    expect(messageValidator.validateRpcRequest('attribution.getMetrics', request('getPaths'))).toMatch(/operation/);
    expect(messageValidator.validateRpcRequest('attribution.nope', request('nope'))).toMatch(/unknown RPC method/);
    const { key: _, ...noKey } = request('getMetrics');
    expect(messageValidator.validateRpcRequest('attribution.getMetrics', noKey)).toMatch(/key/);
    expect(messageValidator.validateRpcRequest('attribution.getMetrics', request('getMetrics', {
      workspace: { id: 'w1', name: 'A', timezone: 'UTC', currency: 'euro', plan: 'pro' },
    }))).toMatch(/currency/);
    expect(messageValidator.validateRpcResponse('attribution.getMetrics', { status: '200', body: {} })).toMatch(/status/);
    expect(messageValidator.validateRpcResponse('attribution.getMetrics', { status: 200 })).toMatch(/body/);
  });
});
