// Normalisation and hashing against the examples the platforms publish.
import { hashedUserIds, normaliseEmail, normalisePhone, platformPhone, sha256Hex } from './identifiers';

describe('normaliseEmail', () => {
  it("applies Google's gmail.com / googlemail.com rule (Data Manager 'Format user data' examples)", () => {
    expect(normaliseEmail('cloudy.sanfrancisco+shopping@gmail.com', 'google_ads')).toBe('cloudysanfrancisco@gmail.com');
    expect(normaliseEmail(' Cloudy.SanFrancisco@GoogleMail.com ', 'google_ads')).toBe('cloudysanfrancisco@googlemail.com');
    expect(normaliseEmail('user.name+NYC@Example.com', 'google_ads')).toBe('user.name+nyc@example.com');
  });
  it('only trims and lower-cases for Meta and LinkedIn (no Gmail rule)', () => {
    expect(normaliseEmail('  Cloudy.SanFrancisco+shop@Gmail.com ', 'meta_ads')).toBe('cloudy.sanfrancisco+shop@gmail.com');
    expect(normaliseEmail('Person@Example.com', 'linkedin_ads')).toBe('person@example.com');
  });
  it('refuses what is not an address', () => {
    for (const bad of ['', 'no-at-sign', '@example.com', 'a@', 'a@b@c', null, undefined, '+x@gmail.com']) {
      expect(normaliseEmail(bad as string, 'google_ads')).toBeNull();
    }
  });
});

describe('normalisePhone', () => {
  it('gives E.164 with the country code', () => {
    expect(normalisePhone('(800)555-0100', 'US')).toBe('+18005550100'); // Google's documented example
    expect(normalisePhone('+1 (616) 954-78 88')).toBe('+16169547888');
    expect(normalisePhone('+44 844 412 4653')).toBe('+448444124653');
    expect(normalisePhone('0044 844 412 4653', 'de')).toBe('+448444124653');
    expect(normalisePhone('030 1234567', 'DE')).toBe('+49301234567');
  });
  it('refuses a national number without a default country, and garbage', () => {
    expect(normalisePhone('(800)555-0100')).toBeNull();
    expect(normalisePhone('12345', 'US')).toBeNull();
    expect(normalisePhone('call me', 'US')).toBeNull();
    expect(normalisePhone('', 'US')).toBeNull();
  });
  it('formats per platform: Google keeps "+", Meta digits only, LinkedIn none', () => {
    expect(platformPhone('+1 (616) 954-78 88', 'google_ads')).toBe('+16169547888');
    expect(platformPhone('+1 (616) 954-78 88', 'meta_ads')).toBe('16169547888');
    expect(platformPhone('+1 (616) 954-78 88', 'linkedin_ads')).toBeNull();
  });
});

describe('hashing', () => {
  it('is SHA-256, lower-case hex', () => {
    // Published example: "Person@Example.com" normalised to "person@example.com".
    expect(sha256Hex('person@example.com')).toBe('542d240129883c019e106e3b1b2d3f3cb3537c43c425364de8e951d5a3083345');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
  it('hashes the normalised identifiers per platform', () => {
    const contact = { email: 'cloudy.sanfrancisco+shopping@gmail.com', phone: '(800)555-0100' };
    expect(hashedUserIds('google_ads', contact, 'US')).toEqual({
      email: sha256Hex('cloudysanfrancisco@gmail.com'),
      phone: sha256Hex('+18005550100'),
    });
    expect(hashedUserIds('meta_ads', contact, 'US')).toEqual({
      email: sha256Hex('cloudy.sanfrancisco+shopping@gmail.com'),
      phone: sha256Hex('18005550100'),
    });
    expect(hashedUserIds('linkedin_ads', contact, 'US')).toEqual({ email: sha256Hex('cloudy.sanfrancisco+shopping@gmail.com'), phone: null });
    expect(hashedUserIds('google_ads', { email: null, phone: '555' })).toEqual({ email: null, phone: null });
  });
});
