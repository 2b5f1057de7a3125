// A body's depth and size are known before anything recursive meets it; per-item subtrees (POST
// /events) are cut to be carried, not refused, so the service can reject the bad item by its index.
import { MAX_JSON_DEPTH, MAX_JSON_VALUES } from '@sightline/kit';
import { boundBody } from './body-bounds';

/** `depth` objects inside one another around a leaf, built without recursion or JSON.parse. */
const nested = (depth: number): Record<string, unknown> => {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 1; i < depth; i += 1) at = (at['a'] = {}) as Record<string, unknown>;
  at['a'] = 1;
  return root;
};
const NONE = new Set<string>();

describe('boundBody', () => {
  it('takes a body exactly at the depth limit and refuses one a level deeper, wherever it is', () => {
    expect(boundBody(nested(MAX_JSON_DEPTH), NONE)).toBeNull();
    expect(boundBody(nested(MAX_JSON_DEPTH + 1), NONE)).toMatchObject({ rule: 'depth', reason: `is nested deeper than ${MAX_JSON_DEPTH} levels` });
    expect(boundBody({ ok: [1], deep: [nested(MAX_JSON_DEPTH - 1)] }, NONE)).toMatchObject({ rule: 'depth', path: expect.stringMatching(/^deep\.0(\.a)+$/) });
    // Hundreds of thousands of levels: no stack overflow.
    expect(boundBody(nested(300_000), NONE)?.rule).toBe('depth');
  });

  it('counts every value, per-item ones too, and refuses past the limit before walking a huge array', () => {
    expect(boundBody({ events: new Array(MAX_JSON_VALUES - 2).fill(0) }, new Set(['events']))).toBeNull();
    expect(boundBody({ events: new Array(MAX_JSON_VALUES - 1).fill(0) }, new Set(['events']))).toMatchObject({ rule: 'size', path: '' });
    expect(boundBody({ a: Array.from({ length: 600 }, () => ({ b: new Array(200).fill('x') })) }, NONE)?.rule).toBe('size');
  });

  it('cuts a per-item subtree at the bound instead of refusing the request, leaving the other items as sent', () => {
    const deep = { event_type: 'custom', properties: nested(5_000) };
    const fine = { event_type: 'custom', properties: { a: { b: 1 } } };
    const body = { website: 'shop.test', events: [fine, deep] };
    expect(boundBody(body, new Set(['events']))).toBeNull();
    expect(body.events[0]).toEqual({ event_type: 'custom', properties: { a: { b: 1 } } });
    // body → events → item → properties → a … : the last container kept is at depth MAX_JSON_DEPTH - 1.
    let at: unknown = body.events[1]?.properties;
    let depth = 3;
    while (at && typeof at === 'object') {
      at = (at as Record<string, unknown>)['a'];
      depth += 1;
    }
    expect({ depth, at }).toEqual({ depth: MAX_JSON_DEPTH, at: null });
    // A "__proto__" member (JSON.parse makes it an own property) is cut like any other.
    const hostile = JSON.parse(`{"events":[{"properties":{"__proto__":${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}}}]}`) as unknown;
    expect(boundBody(hostile, new Set(['events']))).toBeNull();
    expect(JSON.stringify(hostile).length).toBeLessThan(500);
    // Only per-item subtrees are cut: the same depth elsewhere is refused.
    expect(boundBody({ website: 'shop.test', other: [{ properties: nested(5_000) }] }, new Set(['events']))?.rule).toBe('depth');
  });
});
