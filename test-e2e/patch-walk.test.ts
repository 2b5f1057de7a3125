// Issue 24: a PATCH carries only the fields being changed. For every PATCH operation of the served
// OpenAPI document (an operation added later is walked without touching this file): the resource is
// made through its collection's POST (with the body's documented example) or, where it has none, a
// fixture; then each field of the PATCH body is changed alone, and a GET shows that field changed and
// every other one as it was. Everything runs through the gateway to the real services, embedded.
import { randomUUID } from 'node:crypto';
import { adminOf } from './admin-client';
import { candidatesFor, resolveIn } from './patch-values';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
interface Answer {
  status: number;
  body: Json;
}

/**
 * Fields a write changes by itself, whatever it changes: when it happened, and what records the write
 * (a contact's value history and CRM write-back log); and a funnel's read model, built in the
 * background (building, then ready) after a change. Named, so nothing else may move unnoticed.
 */
const BOOKKEEPING = new Set(['updated_at', 'value_history', 'writeback', 'read_model']);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

describe('issue 24: every PATCH operation changes only the fields it is sent', () => {
  let stack: Stack;
  let key: string;
  let document: Json;

  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const r = await fetch(`${stack.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** Resources no POST makes: a contact is a conversion, sent as an event. Keyed by the canonical PATCH operation. */
  const FIXTURES: Record<string, () => Promise<string>> = {
    patchContact: async () => {
      const email = `walk-${randomUUID()}@example.com`;
      const sent = await call('POST', '/v1/events', { events: [{ event_type: 'purchase', event_name: 'order', email, anonymous_id: randomUUID(), revenue: 10, currency: 'EUR' }] });
      expect(sent.body['accepted']).toBe(1);
      return waitFor('the contact', async () => {
        const rows = (await call('GET', `/v1/contacts?email=${encodeURIComponent(email)}`)).body['data'] as Json[] | undefined;
        return rows?.[0] ? String(rows[0]['id']) : undefined;
      });
    },
  };

  beforeAll(async () => {
    stack = await startStack({ targets: ['all'] });
    const admin = adminOf(stack.proc);
    const ws = await admin('/workspaces', { name: 'Patch walk', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: 'walk.test' });
    key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    document = (await (await fetch(`${stack.base}/v1/openapi.json`)).json()) as Json;
  }, 120_000);

  afterAll(async () => stack?.stop(), 60_000);

  it('for each PATCH operation: one field at a time, and every other field is unchanged on GET', async () => {
    const paths = document['paths'] as Record<string, Record<string, Json>>;
    const patches = Object.entries(paths).filter(([, item]) => item['patch']);
    expect(patches.map(([path]) => path)).toEqual(expect.arrayContaining(['/v1/funnels/{id}', '/v1/contacts/{id}', '/v1/automations/{id}']));
    const failures: string[] = [];
    let changed = 0;

    for (const [path, item] of patches) {
      const op = item['patch'] as Json;
      const label = `PATCH ${path}`;
      const canonical = String(op['x-sightline-canonical-operation'] ?? op['operationId']);
      const collection = path.replace(/\/\{[^}]+\}$/, '');
      const create = paths[collection]?.['post'];
      let id: string;
      if (create) {
        const schema = resolveIn(document, ((create['requestBody'] as Json)['content'] as Record<string, Json>)['application/json']?.['schema']);
        const example = (schema['examples'] as unknown[] | undefined)?.[0];
        const made = await call('POST', collection, example);
        expect({ label, status: made.status, body: made.status === 200 ? null : made.body }).toEqual({ label, status: 200, body: null });
        id = String((made.body['data'] as Json)['id']);
      } else {
        const fixture = FIXTURES[canonical];
        if (!fixture) throw new Error(`${label}: its collection has no POST and there is no fixture for ${canonical}: add one to FIXTURES`);
        id = await fixture();
      }
      const at = path.replace(/\{[^}]+\}/, id);
      const get = async () => {
        const answer = await call('GET', at);
        expect({ label, status: answer.status }).toEqual({ label, status: 200 });
        return answer.body['data'] as Json;
      };

      const body = resolveIn(document, ((op['requestBody'] as Json)['content'] as Record<string, Json>)['application/json']?.['schema']);
      const fields = Object.entries((body['properties'] as Record<string, unknown> | undefined) ?? {});
      expect({ label, fields: fields.length > 0 }).toEqual({ label, fields: true });
      for (const [field, schema] of fields) {
        const before = await get();
        const tried: string[] = [];
        let sent: unknown;
        let accepted = false;
        for (const candidate of candidatesFor(document, schema, before[field])) {
          const answer = await call('PATCH', at, { [field]: candidate });
          if (answer.status === 200) {
            sent = candidate;
            accepted = true;
            break;
          }
          tried.push(`${JSON.stringify(candidate).slice(0, 120)} → ${answer.status} ${String(answer.body['detail']).slice(0, 200)}`);
        }
        if (!accepted) {
          failures.push(`${label} {${field}}: no value was accepted: ${tried.join('; ')}`);
          continue;
        }
        if (!same(sent, before[field])) changed += 1;
        const after = await get();
        // The field sent holds what was sent (a value sent whole may come back with its own defaults filled in).
        if (!same(after[field], sent) && !(sent && typeof sent === 'object' && after[field] && typeof after[field] === 'object' && same({ ...(after[field] as object), ...(sent as object) }, after[field]))) {
          failures.push(`${label} {${field}}: sent ${JSON.stringify(sent)}, reads ${JSON.stringify(after[field])}`);
        }
        for (const other of new Set([...Object.keys(before), ...Object.keys(after)])) {
          if (other === field || BOOKKEEPING.has(other)) continue;
          if (!same(before[other], after[other])) failures.push(`${label} {${field}}: ${other} changed from ${JSON.stringify(before[other])} to ${JSON.stringify(after[other])}`);
        }
      }
    }
    expect(failures).toEqual([]);
    // The walk changed fields for real, not only sent what was already there.
    expect(changed).toBeGreaterThanOrEqual(10);
  }, 150_000);
});
