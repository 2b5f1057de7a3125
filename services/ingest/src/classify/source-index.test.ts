import builtInSources from './source-categories.v1.json';
import { SourceIndex } from './source-index';
import type { SourceCategoriesFile } from './rule-types';

const file = builtInSources as SourceCategoriesFile;
const index = new SourceIndex(file);

describe('source category list v1', () => {
  it('lists every domain, alias and name once', () => {
    const domains = file.sources.flatMap((s) => s.domains);
    expect(domains.filter((d, i) => domains.indexOf(d) !== i)).toEqual([]);
    const keys = file.sources.flatMap((s) => [s.name, ...(s.aliases ?? [])].map((k) => k.toLowerCase()));
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  it('names the AI assistants the issue calls out', () => {
    for (const host of ['chatgpt.com', 'chat.openai.com', 'perplexity.ai', 'www.perplexity.ai', 'claude.ai', 'gemini.google.com', 'copilot.microsoft.com']) {
      expect(index.lookupHost(host)?.category).toBe('ai_assistant');
    }
  });

  it('matches wildcard domains under any public suffix but only at the front door', () => {
    expect(index.lookupHost('www.google.com.br')?.name).toBe('google');
    expect(index.lookupHost('google.co.jp')?.name).toBe('google');
    expect(index.lookupHost('m.google.fr')?.name).toBe('google');
    expect(index.lookupHost('translate.google.com')).toBeNull();
    expect(index.lookupHost('www.amazon.co.uk')?.category).toBe('shopping');
  });

  it('matches listed domains with any subdomain, the longest listed domain first', () => {
    expect(index.lookupHost('lm.facebook.com')?.name).toBe('facebook');
    expect(index.lookupHost('mail.yahoo.com')?.category).toBe('email');
    expect(index.lookupHost('search.yahoo.com')?.category).toBe('search');
    expect(index.lookupHost('notfacebook.com')).toBeNull();
  });

  it('gives each category its inferred medium', () => {
    expect(index.mediumFor('search')).toBe('organic');
    expect(index.mediumFor('social')).toBe('social');
    expect(index.mediumFor(null)).toBe('referral');
  });
});
