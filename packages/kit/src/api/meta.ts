// The head every `meta` block starts with: which website the answer is about, and the timezone and
// currency its figures are expressed in (the spec's Meta block). Endpoints add what they report.

export interface MetaWebsite {
  id: string;
  domain: string;
  timezone: string;
  currency: string;
}

export interface MetaHead {
  website_id: string;
  website: string;
  timezone: string;
  currency: string;
}

export function metaHead(website: MetaWebsite): MetaHead {
  return { website_id: website.id, website: website.domain, timezone: website.timezone, currency: website.currency };
}
