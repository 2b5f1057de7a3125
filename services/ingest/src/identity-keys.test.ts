import { derivedUuid, normaliseEmail, normalisePhone, sha256Hex } from './identity-keys';

describe('identity keys', () => {
  it('normalises emails before hashing, so case and spaces do not split a person', () => {
    expect(normaliseEmail('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(sha256Hex(normaliseEmail('ADA@example.com'))).toBe(sha256Hex('ada@example.com'));
  });

  it('normalises phones to E.164 and refuses what is not an international number', () => {
    expect(normalisePhone('+44 20 7946 0958')).toBe('+442079460958');
    expect(normalisePhone('+1 (415) 555-2671')).toBe('+14155552671');
    expect(normalisePhone('555-2671')).toBeNull();
  });

  it('derives stable, well-formed UUIDs', () => {
    const a = derivedUuid('w', 'key', '0');
    expect(a).toBe(derivedUuid('w', 'key', '0'));
    expect(a).not.toBe(derivedUuid('w', 'key', '1'));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
