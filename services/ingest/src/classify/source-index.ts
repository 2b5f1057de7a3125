// Looks up a referrer host or a utm_source value in the source category list.
import { parse as parseDomain } from 'tldts';
import type { SourceCategoriesFile, SourceCategory, SourceEntry } from './rule-types';

export interface SourceInfo {
  name: string;
  category: SourceCategory;
}

/** Subdomains a `name.*` pattern accepts: a search engine's front door, not its other products. */
const WILDCARD_SUBDOMAINS = new Set(['', 'www', 'm']);

export class SourceIndex {
  private readonly byAlias = new Map<string, SourceInfo>();
  private readonly byDomain = new Map<string, SourceInfo>();
  private readonly byWildcard = new Map<string, SourceInfo>();
  private readonly categoryMedium: Record<SourceCategory, string>;

  /** Later entries win, so an operator's extra sources override the built-in ones. */
  constructor(file: SourceCategoriesFile, extra: readonly SourceEntry[] = []) {
    this.categoryMedium = file.categoryMedium;
    for (const entry of [...file.sources, ...extra]) {
      const info: SourceInfo = { name: entry.name, category: entry.category };
      this.byAlias.set(entry.name.toLowerCase(), info);
      for (const alias of entry.aliases ?? []) this.byAlias.set(alias.trim().toLowerCase(), info);
      for (const domain of entry.domains) {
        if (domain.endsWith('.*')) this.byWildcard.set(domain.slice(0, -2), info);
        else this.byDomain.set(domain, info);
      }
    }
  }

  /** Medium for a hit inferred from a referrer of this category (search → organic, ...). */
  mediumFor(category: SourceCategory | null): string {
    return category ? this.categoryMedium[category] : 'referral';
  }

  /** A referrer host (lower-case): the longest listed domain wins, then a `name.*` pattern. */
  lookupHost(host: string): SourceInfo | null {
    let candidate = host;
    for (;;) {
      const hit = this.byDomain.get(candidate);
      if (hit) return hit;
      const dot = candidate.indexOf('.');
      if (dot < 0) break;
      candidate = candidate.slice(dot + 1);
    }
    if (this.byWildcard.size === 0) return null;
    const parsed = parseDomain(host, { allowPrivateDomains: false });
    const label = parsed.domainWithoutSuffix;
    if (!label || !WILDCARD_SUBDOMAINS.has(parsed.subdomain ?? '')) return null;
    return this.byWildcard.get(label) ?? null;
  }

  /** An exact host only (app package names such as com.google.android.gm). */
  lookupExactHost(host: string): SourceInfo | null {
    return this.byDomain.get(host) ?? null;
  }

  /** A normalised utm_source (or inferred source) value: an alias, else a domain-looking value as a host. */
  lookupSource(source: string): SourceInfo | null {
    const hit = this.byAlias.get(source);
    if (hit) return hit;
    if (source.includes('.') && !source.includes(' ')) return this.lookupHost(source.startsWith('www.') ? source.slice(4) : source);
    return null;
  }
}
