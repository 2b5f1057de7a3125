// Domains as people paste them: a bare domain, a URL, upper case, a trailing dot, slash or query.

/** `HTTPS://Shop.Example.com/path?x=1` → `shop.example.com`. A website's domain is kept as written (www included). */
export function normaliseDomain(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#].*$/, '')
    .replace(/\.$/, '');
}

/** A company's domain, as CRMs hold it: the website rule, then without a leading `www.`. */
export function companyDomain(value: string): string {
  return normaliseDomain(value).replace(/^www\./, '');
}
