import builtIn from './channel-rules.v1.json';
import { buildClassifier, exampleHit, findExampleFailures } from './classify';
import { BUILT_IN_CHANNELS, buildRules, CHANNEL_RULES_VERSION, matchChannel, UNASSIGNED_RULE_ID } from './channel-rules';
import { NO_GEO_LOOKUP } from './geo';
import type { ChannelRulesFile } from './rule-types';

const rules = buildRules(undefined);
const classifier = buildClassifier(rules, NO_GEO_LOOKUP);
const table = (builtIn as ChannelRulesFile).rules;

describe('channel rule table v1: one test per row', () => {
  it.each(table.map((row) => [row.id, row.channel] as const))('row %s → %s: every example lands on this row', (id) => {
    const compiled = rules.rules.find((r) => r.id === id);
    expect(compiled).toBeDefined();
    expect(compiled?.row.examples.length).toBeGreaterThan(0);
    expect(findExampleFailures(classifier, compiled ? [compiled] : [])).toEqual([]);
  });
});

describe('channel rule table v1: as a whole', () => {
  it('has unique row ids and keeps the file order', () => {
    expect(rules.rules.map((r) => r.id)).toEqual(table.map((r) => r.id));
    expect(new Set(table.map((r) => r.id)).size).toBe(table.length);
  });

  it('covers the GA4 default channels plus AI Assistants', () => {
    expect([...BUILT_IN_CHANNELS].sort()).toEqual(
      [
        'AI Assistants', 'Affiliates', 'Audio', 'Cross-network', 'Direct', 'Display', 'Email',
        'Mobile Push Notifications', 'Organic Search', 'Organic Shopping', 'Organic Social', 'Organic Video',
        'Paid Other', 'Paid Search', 'Paid Shopping', 'Paid Social', 'Paid Video', 'Referral', 'SMS', 'Unassigned',
      ].sort(),
    );
  });

  it('tries AI Assistants after the paid rows and before every organic and referral row', () => {
    const at = (id: string) => table.findIndex((r) => r.id === id);
    expect(at('ai-assistants')).toBeGreaterThan(at('paid-other'));
    for (const id of ['organic-shopping', 'organic-social', 'organic-video', 'organic-search', 'referral']) {
      expect(at('ai-assistants')).toBeLessThan(at(id));
    }
  });

  it('answers Unassigned when no row holds', () => {
    const got = classifier.classify(exampleHit({ url: 'https://example.com/?utm_source=partner-x&utm_medium=qr-code' }));
    expect(got.channel).toBe('Unassigned');
    expect(got.channel_rule).toBe(UNASSIGNED_RULE_ID);
  });

  it('pays attention to the paid medium before the source category (paid AI traffic is Paid Other)', () => {
    const got = classifier.classify(exampleHit({ url: 'https://example.com/?utm_source=chatgpt.com&utm_medium=cpc' }));
    expect(got.channel).toBe('Paid Other');
  });

  it('matches rows on lower-cased source and medium, and campaign case-insensitively', () => {
    expect(matchChannel(rules.rules, { source: 'google', medium: 'cpc', campaign: 'PMax_CROSS-NETWORK', sourceCategory: 'search', clickIds: {} }).channel).toBe(
      'Cross-network',
    );
    expect(classifier.classify(exampleHit({ url: 'https://example.com/?utm_source=FaceBook&utm_medium=Paid_Social' })).channel).toBe('Paid Social');
  });

  it('exports a version naming both tables', () => {
    expect(CHANNEL_RULES_VERSION).toBe('channel-rules.v1/sources.v1');
    expect(classifier.rulesVersion).toBe(CHANNEL_RULES_VERSION);
  });
});
