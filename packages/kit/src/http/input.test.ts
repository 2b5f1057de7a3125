import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { addInputFormats, findInputFault, isStorableEpochMs, MAX_JSON_DEPTH, MAX_JSON_VALUES, parseStorableTime, textFault } from './input';

const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
};

describe('input rules', () => {
  it('refuses NUL and lone surrogates, keeps every well-formed string', () => {
    expect(textFault('a\u0000b')).toMatch(/NUL/);
    expect(textFault('\uD800')).toMatch(/surrogate/);
    expect(textFault('x\uDC00')).toMatch(/surrogate/);
    expect(textFault('\uDBFF\uDFFF')).toBeNull(); // a pair is a real character (U+10FFFF)
    expect(textFault('😀 Ünïcødé \u0001')).toBeNull();
    expect(textFault('')).toBeNull();
  });

  it('finds the first fault with its path, in values and in object keys', () => {
    expect(findInputFault({ events: [{ ok: 'x' }, { properties: { note: 'a\u0000' } }] })).toEqual({ path: 'events.1.properties.note', reason: expect.stringMatching(/NUL/), rule: 'text' });
    expect(findInputFault({ props: { ['k\uD800']: 1 } })).toEqual({ path: 'props.k\uD800', reason: expect.stringMatching(/name that contains a lone/), rule: 'text' });
    expect(findInputFault({ a: [1, true, null, 'fine'] })).toBeNull();
  });

  it('caps nesting exactly at the maximum depth, without recursion', () => {
    expect(findInputFault(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(findInputFault(nested(MAX_JSON_DEPTH + 1))?.reason).toMatch(/nested deeper/);
    expect(findInputFault(nested(200_000))?.reason).toMatch(/nested deeper/);
    expect(findInputFault(nested(MAX_JSON_DEPTH + 1))?.rule).toBe('depth');
  });

  it('caps the values a body holds, counted before a huge array or object is walked', () => {
    // The root counts as one value: an array of MAX_JSON_VALUES - 1 items is exactly at the limit.
    expect(findInputFault(new Array(MAX_JSON_VALUES - 1).fill(0))).toBeNull();
    expect(findInputFault(new Array(MAX_JSON_VALUES).fill(0))).toEqual({ path: '', reason: 'holds more than 100,000 values', rule: 'size' });
    expect(findInputFault(Object.fromEntries(Array.from({ length: MAX_JSON_VALUES }, (_, i) => [`k${i}`, i])))?.rule).toBe('size');
    // Spread over many levels and arrays, all counted: the root, a, b, the two pairs, four numbers, c.
    expect(findInputFault({ a: [[1, 2], [3, 4]], b: { c: 'x' } }, { maxValues: 10 })).toBeNull();
    expect(findInputFault({ a: [[1, 2], [3, 4]], b: { c: 'x' } }, { maxValues: 9 })?.rule).toBe('size');
    // A skipped subtree is not counted (its per-item check counts it).
    expect(findInputFault({ events: new Array(10).fill({ a: 1 }) }, { maxValues: 2, skip: (path) => path === 'events' })).toBeNull();
  });

  it('leaves skipped subtrees to a later check', () => {
    const body = { website: 'x', events: [{ anonymous_id: 'a\u0000' }] };
    expect(findInputFault(body, { skip: (path) => path === 'events' })).toBeNull();
    expect(findInputFault({ ...body, website: 'x\u0000' }, { skip: (path) => path === 'events' })?.path).toBe('website');
  });

  it('takes RFC 3339 date-times inside the storable range, at both edges', () => {
    expect(parseStorableTime('2000-01-01T00:00:00Z')).toBe(Date.UTC(2000, 0, 1));
    expect(parseStorableTime('1999-12-31T23:59:59.999Z')).toBeNull();
    expect(parseStorableTime('2000-01-01T00:30:00+01:00')).toBeNull(); // 1999-12-31T23:30Z
    expect(parseStorableTime('1999-12-31T23:30:00-01:00')).toBe(Date.UTC(2000, 0, 1, 0, 30));
    expect(parseStorableTime('1970-01-01T00:00:00Z')).toBeNull();
    expect(parseStorableTime('2099-12-31T23:59:59.999Z')).toBe(Date.UTC(2100, 0, 1) - 1);
    expect(parseStorableTime('2100-01-01T00:00:00Z')).toBeNull();
    expect(parseStorableTime('2100-01-01T00:30:00+01:00')).toBe(Date.UTC(2099, 11, 31, 23, 30)); // the offset decides
    expect(parseStorableTime('2025-03-01T10:00:00.123456+02:00')).toBe(Date.UTC(2025, 2, 1, 8, 0, 0, 123));
  });

  it('refuses leap seconds, impossible days, year 0000/0070/1970/9999 and missing zones', () => {
    for (const text of ['2016-12-31T23:59:60Z', '2025-02-29T00:00:00Z', '2025-04-31T00:00:00Z', '0000-01-01T00:00:00Z', '0070-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z', '2025-01-01T24:00:00Z', '2025-01-01T00:00:00', '2025-01-01', 'yesterday', '2025-01-01T00:00:00+24:00']) {
      expect({ text, parsed: parseStorableTime(text) }).toEqual({ text, parsed: null });
    }
    expect(parseStorableTime('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
  });

  it('gives ajv the same date-time rule, and a uuid the stores read', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    addInputFormats(ajv);
    const validate = ajv.compile({ type: 'string', format: 'date-time' });
    expect(validate('2025-01-01T00:00:00Z')).toBe(true);
    expect(validate('2016-12-31T23:59:60Z')).toBe(false);
    expect(validate('0000-01-01T00:00:00Z')).toBe(false);
    const uuid = ajv.compile({ type: 'string', format: 'uuid' });
    expect(uuid('0b6d2a52-8a43-4c4f-9d3e-2f1f3c1d7e10')).toBe(true);
    expect(uuid('urn:uuid:0b6d2a52-8a43-4c4f-9d3e-2f1f3c1d7e10')).toBe(false);
  });

  it('checks epoch milliseconds against the same range', () => {
    expect(isStorableEpochMs(Date.UTC(2000, 0, 1))).toBe(true);
    expect(isStorableEpochMs(Date.UTC(2000, 0, 1) - 1)).toBe(false);
    expect(isStorableEpochMs(0)).toBe(false);
    expect(isStorableEpochMs(Date.UTC(2100, 0, 1))).toBe(false);
    expect(isStorableEpochMs(Number.NaN)).toBe(false);
  });

  it('reads date-times exactly as the RFC 3339 grammar does (the character reader against a regex oracle)', () => {
    const pad = (n: number, width: number) => String(n).padStart(width, '0');
    const piece = fc.tuple(
      fc.integer({ min: 1995, max: 2105 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }),
      fc.constantFrom('T', 't', ' ', 'x'), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }),
      fc.option(fc.stringMatching(/^[0-9]{0,11}$/)), fc.constantFrom('Z', 'z', '', '+', '-', 'Zx'), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }),
    ).map(([y, mo, d, sep, h, mi, sec, frac, zone, oh, om]) => {
      const offset = zone === '+' || zone === '-' ? `${zone}${pad(oh, 2)}:${pad(om, 2)}` : zone;
      return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}${sep}${pad(h, 2)}:${pad(mi, 2)}:${pad(sec, 2)}${frac === null ? '' : `.${frac}`}${offset}`;
    });
    // The generator must reach both sides: well-formed, storable times as well as near misses.
    expect(fc.sample(piece, 2_000).filter((text) => regexOracle(text) !== null).length).toBeGreaterThan(100);
    fc.assert(fc.property(fc.oneof(piece, fc.string()), (text) => {
      expect(parseStorableTime(text)).toBe(regexOracle(text));
    }), { numRuns: 20_000 });
  });
});

// The grammar as one regular expression: the reference the character reader must agree with.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
function regexOracle(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  if (year < 1999 || year > 2100) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  let offsetMinutes = 0;
  if (!m[8]) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const epoch = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  return isStorableEpochMs(epoch) ? epoch : null;
}
