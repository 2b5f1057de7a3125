// JSON Schemas (draft-07) for the rule table, the source list and an operator's extra rules file.
import { CLICK_ID_NAMES, SOURCE_CATEGORIES } from './rule-types';

const nonEmpty = { type: 'string', minLength: 1 } as const;
const stringList = { type: 'array', items: nonEmpty, minItems: 1 } as const;

const utmValues = {
  type: 'object',
  additionalProperties: false,
  properties: { source: nonEmpty, medium: nonEmpty, campaign: nonEmpty, term: nonEmpty, content: nonEmpty },
} as const;

const condition = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    sourceIn: stringList,
    sourceMatches: nonEmpty,
    sourceCategoryIn: { type: 'array', items: { enum: [...SOURCE_CATEGORIES] }, minItems: 1 },
    mediumIn: stringList,
    mediumMatches: nonEmpty,
    campaignMatches: nonEmpty,
    clickIdIn: { type: 'array', items: { enum: [...CLICK_ID_NAMES] }, minItems: 1 },
  },
} as const;

const example = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: ['string', 'null'] },
    referrer: { type: ['string', 'null'] },
    utm: utmValues,
    note: { type: 'string' },
    expect: {
      type: 'object',
      additionalProperties: false,
      properties: { source: { type: 'string' }, medium: { type: 'string' }, campaign: { type: ['string', 'null'] } },
    },
  },
} as const;

export const channelRuleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'channel', 'description', 'any', 'examples'],
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 64 },
    channel: { type: 'string', minLength: 1, maxLength: 64 },
    description: nonEmpty,
    any: { type: 'array', items: condition, minItems: 1 },
    // A row without an example cannot be tested, so it is not a valid row.
    examples: { type: 'array', items: example, minItems: 1 },
  },
} as const;

export const channelRulesFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'rules'],
  properties: {
    version: nonEmpty,
    description: { type: 'string' },
    rules: { type: 'array', items: channelRuleSchema, minItems: 1 },
  },
} as const;

const sourceEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'category', 'domains'],
  properties: {
    name: nonEmpty,
    category: { enum: [...SOURCE_CATEGORIES] },
    domains: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9.*_-]+$' } },
    aliases: { type: 'array', items: nonEmpty },
  },
} as const;

export const sourceCategoriesFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'categoryMedium', 'sources'],
  properties: {
    version: nonEmpty,
    description: { type: 'string' },
    categoryMedium: {
      type: 'object',
      additionalProperties: false,
      required: [...SOURCE_CATEGORIES],
      properties: Object.fromEntries(SOURCE_CATEGORIES.map((c) => [c, nonEmpty])),
    },
    sources: { type: 'array', items: sourceEntry },
  },
} as const;

export const extraRulesFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' },
    description: { type: 'string' },
    prepend: { type: 'array', items: channelRuleSchema },
    append: { type: 'array', items: channelRuleSchema },
    insertBefore: { type: 'object', additionalProperties: { type: 'array', items: channelRuleSchema } },
    sources: { type: 'array', items: sourceEntry },
  },
} as const;
