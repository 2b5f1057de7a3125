// A body's depth and size, checked before anything recursive touches it: ajv, structuredClone and
// the bus's JSON.stringify each recurse once per level and overflow the stack a few thousand levels
// down (a 500 for the whole request). Iterative, so no depth can overflow it.
//
// Subtrees whose items the owning service checks one by one (x-sightline-checked-per-item: POST
// /events) are not refused here for their depth: a bad item is the service's to reject with its index
// while the rest go on. Whatever of them lies deeper than the body's bound is cut (replaced by null) so
// the item can be carried at all; the service's own bound per item is lower (an event nests at most 16
// levels, and sits 2 levels down), so a cut item is always rejected there, never stored cut.
import { MAX_JSON_DEPTH, MAX_JSON_VALUES, type InputFault } from '@sightline/kit';

export interface BodyBounds {
  maxDepth: number;
  maxValues: number;
}

export const BODY_BOUNDS: BodyBounds = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES };

/**
 * The first depth or size fault of `body` outside its per-item subtrees (top-level property names in
 * `perItem`), or null; every value is counted, per-item ones included. Cuts per-item subtrees at
 * `maxDepth` in place.
 */
export function boundBody(body: unknown, perItem: ReadonlySet<string>, bounds: BodyBounds = BODY_BOUNDS): InputFault | null {
  const tooMany: InputFault = { path: '', reason: `holds more than ${bounds.maxValues.toLocaleString('en-US')} values`, rule: 'size' };
  // [value, its path, its depth, inside a per-item subtree]
  const stack: [unknown, string, number, boolean][] = [[body, '', 0, false]];
  let values = 1;
  while (stack.length > 0) {
    const [node, path, depth, lenient] = stack.pop() as [unknown, string, number, boolean];
    if (node === null || typeof node !== 'object') continue;
    const container = node as Record<string, unknown>;
    const keys = Array.isArray(node) ? null : Object.keys(node);
    const count = keys ? keys.length : (node as unknown[]).length;
    // Counted before they are walked, so a huge array costs nothing beyond the limit.
    if ((values += count) > bounds.maxValues) return tooMany;
    for (let i = 0; i < count; i += 1) {
      const key = keys ? (keys[i] as string) : String(i);
      const child = container[key];
      if (child === null || typeof child !== 'object') continue;
      const childPath = path === '' ? key : `${path}.${key}`;
      const childLenient = lenient || (depth === 0 && perItem.has(key));
      if (depth + 1 >= bounds.maxDepth) {
        if (!childLenient) return { path: childPath, reason: `is nested deeper than ${bounds.maxDepth} levels`, rule: 'depth' };
        container[key] = null;
        continue;
      }
      stack.push([child, childPath, depth + 1, childLenient]);
    }
  }
  return null;
}
