// One phrase, one window: every operation that takes `period` resolves it with the same resolver, so
// the same phrase (and the same from/to) gives the same meta.window everywhere. The operations are
// read from the OpenAPI document, so an endpoint that starts taking `period` joins this test (and
// needs its required parameters below, or the test fails).
import { listOperations } from '@sightline/proto-schemas';
import { adminOf } from './admin-client';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;

describe('meta.window on every endpoint that takes period (embedded)', () => {
  let stack: Stack;
  let key: string;
  let funnelId: string;

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const r = await fetch(`${stack.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };

  beforeAll(async () => {
    stack = await startStack({ targets: ['gateway', 'ingest', 'attribution', 'contacts', 'funnels'] });
    const admin = adminOf(stack.proc);
    const ws = await admin('/workspaces', { name: 'Windows', plan: 'internal', timezone: 'America/New_York', currency: 'USD' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: 'windows.test' });
    key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    const funnel = await call('POST', '/v1/funnels', {
      name: 'Pricing to signup',
      steps: [{ name: 'Pricing', conditions: { path_matches: '/pricing' } }, { name: 'Any page', conditions: { event_type: 'pageview' } }],
    });
    expect(funnel.status).toBe(200);
    funnelId = String((funnel.body['data'] as Json)['id']);
  }, 120_000);
  afterAll(async () => stack?.stop(), 60_000);

  /** What each operation needs besides the window, by its path in the document. */
  const required = (): Record<string, string> => ({
    '/v1/metrics': 'metrics=visitors',
    '/v1/ads/performance': 'level=campaign',
    '/v1/paths': '',
    '/v1/products': '',
    '/v1/attribution/coverage': '',
    '/v1/contacts': '',
    '/v1/conversions': '',
    [`/v1/funnels/${funnelId}/steps`]: '',
    [`/v1/funnels/${funnelId}/breakdown`]: '',
  });
  const withPeriod = () =>
    listOperations()
      .filter(({ method, operation }) => method === 'get' && ((operation.parameters ?? []) as { name: string }[]).some((p) => p.name === 'period'))
      .map(({ path }) => path.replace('{id}', funnelId));

  it('knows how to call every operation that takes period', () => {
    const paths = withPeriod();
    expect(paths.length).toBeGreaterThanOrEqual(9);
    expect(paths.filter((p) => !(p in required())).sort()).toEqual([]);
  });

  it.each(['last 30 days', 'yesterday', 'last month', '2026-03-01..2026-03-31', 'this week'])('"%s" is one window everywhere', async (period) => {
    const windows = new Map<string, unknown>();
    for (const path of withPeriod()) {
      const extra = required()[path] ?? '';
      const r = await call('GET', `${path}?${extra}${extra ? '&' : ''}period=${encodeURIComponent(period)}`);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      windows.set(path, (r.body['meta'] as Json)['window']);
    }
    const distinct = new Set([...windows.values()].map((w) => JSON.stringify(w)));
    expect({ period, distinct: [...distinct] }).toEqual({ period, distinct: [JSON.stringify([...windows.values()][0])] });
    expect([...windows.values()][0]).toMatchObject({ expression: period });
  });

  it('from/to is one window everywhere too', async () => {
    const windows = new Set<string>();
    for (const path of withPeriod()) {
      const extra = required()[path] ?? '';
      const r = await call('GET', `${path}?${extra}${extra ? '&' : ''}from=2026-02-01T05:00:00Z&to=2026-02-15T05:00:00Z`);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      windows.add(JSON.stringify((r.body['meta'] as Json)['window']));
    }
    expect([...windows]).toEqual([JSON.stringify({ from: '2026-02-01T05:00:00.000Z', to: '2026-02-15T05:00:00.000Z', expression: null })]);
  });
});
