// Shapes of the channel rule table, the source category list and an operator's extra rules file.
// The JSON Schemas in rule-schemas.ts describe the same shapes; the loader checks files against them.

export const SOURCE_CATEGORIES = ['search', 'social', 'video', 'shopping', 'email', 'ai_assistant'] as const;
export type SourceCategory = (typeof SOURCE_CATEGORIES)[number];

export const CLICK_ID_NAMES = ['gclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'ttclid', 'li_fat_id'] as const;
export type ClickIdName = (typeof CLICK_ID_NAMES)[number];
export type ClickIds = Partial<Record<ClickIdName, string>>;

export const UTM_FIELDS = ['source', 'medium', 'campaign', 'term', 'content'] as const;
export type UtmField = (typeof UTM_FIELDS)[number];
export type UtmValues = Partial<Record<UtmField, string>>;

/** One alternative of a rule: every field present must hold. */
export interface RuleCondition {
  sourceIn?: string[];
  sourceMatches?: string;
  sourceCategoryIn?: SourceCategory[];
  mediumIn?: string[];
  mediumMatches?: string;
  campaignMatches?: string;
  /** Holds when any of these click ids is on the landing URL. */
  clickIdIn?: ClickIdName[];
}

/** A hit on https://example.com that must land on the row carrying it. */
export interface RuleExample {
  url?: string | null;
  referrer?: string | null;
  utm?: UtmValues;
  note?: string;
  expect?: { source?: string; medium?: string; campaign?: string | null };
}

export interface ChannelRule {
  id: string;
  channel: string;
  description: string;
  /** The row holds when any entry holds. */
  any: RuleCondition[];
  examples: RuleExample[];
}

export interface ChannelRulesFile {
  version: string;
  description?: string;
  rules: ChannelRule[];
}

export interface SourceEntry {
  name: string;
  category: SourceCategory;
  domains: string[];
  aliases?: string[];
}

export interface SourceCategoriesFile {
  version: string;
  description?: string;
  /** Medium given to a hit inferred from a referrer of this category. */
  categoryMedium: Record<SourceCategory, string>;
  sources: SourceEntry[];
}

/** An operator's additions, loaded from `extraRulesFile`. */
export interface ExtraRulesFile {
  version: string;
  description?: string;
  prepend?: ChannelRule[];
  append?: ChannelRule[];
  /** Rows to place right before the built-in (or prepended) row with this id. */
  insertBefore?: Record<string, ChannelRule[]>;
  /** Extra or corrected sources; they take precedence over the built-in list. */
  sources?: SourceEntry[];
}
