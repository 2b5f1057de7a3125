// Loads the channel rule table (built-in JSON plus an operator's extra file), checks it against its
// JSON Schema, and compiles it into a first-match-wins matcher.
import { readFile } from 'node:fs/promises';
import Ajv, { type ErrorObject } from 'ajv';
import builtInRules from './channel-rules.v1.json';
import builtInSources from './source-categories.v1.json';
import { channelRulesFileSchema, extraRulesFileSchema, sourceCategoriesFileSchema } from './rule-schemas';
import type {
  ChannelRule,
  ChannelRulesFile,
  ClickIdName,
  ClickIds,
  ExtraRulesFile,
  RuleCondition,
  SourceCategoriesFile,
  SourceCategory,
} from './rule-types';
import { SourceIndex } from './source-index';

/** Channel given to a hit that no row claims (as GA4 does). */
export const UNASSIGNED_CHANNEL = 'Unassigned';
export const UNASSIGNED_RULE_ID = 'unassigned';

/** Version of the built-in tables; an extra file appends `+<its version>`. */
export const CHANNEL_RULES_VERSION = `channel-rules.v${builtInRules.version}/sources.v${builtInSources.version}`;

/** Every channel the built-in table can produce, in table order, then Unassigned. */
export const BUILT_IN_CHANNELS: readonly string[] = [
  ...new Set([...(builtInRules as ChannelRulesFile).rules.map((r) => r.channel), UNASSIGNED_CHANNEL]),
];

/** A rule file that cannot be used; `rowId` names the offending row when there is one. */
export class ChannelRulesError extends Error {
  override name = 'ChannelRulesError';
  constructor(
    message: string,
    readonly file: string,
    readonly rowId?: string,
  ) {
    super(message);
  }
}

/** What a rule is tested against: normalised (lower-case) source and medium. */
export interface RuleInput {
  source: string;
  medium: string;
  campaign: string | null;
  sourceCategory: SourceCategory | null;
  clickIds: ClickIds;
}

interface CompiledCondition {
  sourceIn?: ReadonlySet<string>;
  sourceMatches?: RegExp;
  sourceCategoryIn?: ReadonlySet<SourceCategory>;
  mediumIn?: ReadonlySet<string>;
  mediumMatches?: RegExp;
  campaignMatches?: RegExp;
  clickIdIn?: readonly ClickIdName[];
}

export interface CompiledRule {
  id: string;
  channel: string;
  /** Where the row came from: 'built-in' or the extra file's path. */
  origin: string;
  conditions: readonly CompiledCondition[];
  row: ChannelRule;
}

export interface LoadedRules {
  rules: readonly CompiledRule[];
  sources: SourceIndex;
  version: string;
}

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const validateRulesFile = ajv.compile<ChannelRulesFile>(channelRulesFileSchema);
const validateSourcesFile = ajv.compile<SourceCategoriesFile>(sourceCategoriesFileSchema);
const validateExtraFile = ajv.compile<ExtraRulesFile>(extraRulesFileSchema);

/** Loads the built-in tables and, when given, an operator's extra rules file. */
export async function loadChannelRules(options: { extraRulesFile?: string } = {}): Promise<LoadedRules> {
  let extra: ExtraRulesFile | undefined;
  if (options.extraRulesFile) extra = parseExtraRules(await readExtraFile(options.extraRulesFile), options.extraRulesFile);
  return buildRules(extra, options.extraRulesFile ?? '');
}

/** Same as loadChannelRules, for an extra file already parsed (tests, config embedded in YAML). */
export function buildRules(extra: ExtraRulesFile | undefined, extraOrigin = 'extra rules'): LoadedRules {
  const base = checkFile(validateRulesFile, builtInRules, 'channel-rules.v1.json');
  const sourcesFile = checkFile(validateSourcesFile, builtInSources, 'source-categories.v1.json');
  const rows = assembleRows(base.rules, extra, extraOrigin);
  const sources = new SourceIndex(sourcesFile, extra?.sources ?? []);
  return {
    rules: rows.map(({ row, origin }) => compileRule(row, origin)),
    sources,
    version: extra ? `${CHANNEL_RULES_VERSION}+${extra.version}` : CHANNEL_RULES_VERSION,
  };
}

/** First row that holds wins; none → Unassigned. */
export function matchChannel(rules: readonly CompiledRule[], input: RuleInput): { channel: string; ruleId: string } {
  for (const rule of rules) {
    for (const condition of rule.conditions) {
      if (conditionHolds(condition, input)) return { channel: rule.channel, ruleId: rule.id };
    }
  }
  return { channel: UNASSIGNED_CHANNEL, ruleId: UNASSIGNED_RULE_ID };
}

function conditionHolds(c: CompiledCondition, input: RuleInput): boolean {
  if (c.sourceIn && !c.sourceIn.has(input.source)) return false;
  if (c.sourceMatches && !c.sourceMatches.test(input.source)) return false;
  if (c.sourceCategoryIn && (input.sourceCategory === null || !c.sourceCategoryIn.has(input.sourceCategory))) return false;
  if (c.mediumIn && !c.mediumIn.has(input.medium)) return false;
  if (c.mediumMatches && !c.mediumMatches.test(input.medium)) return false;
  if (c.campaignMatches && (input.campaign === null || !c.campaignMatches.test(input.campaign))) return false;
  if (c.clickIdIn && !c.clickIdIn.some((name) => input.clickIds[name] !== undefined)) return false;
  return true;
}

async function readExtraFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ChannelRulesError(`cannot read extra channel rules file ${path}: ${(err as Error).message}`, path);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ChannelRulesError(`extra channel rules file ${path} is not valid JSON: ${(err as Error).message}`, path);
  }
}

/** Validates an operator's extra rules document (already parsed). */
export function parseExtraRules(doc: unknown, origin: string): ExtraRulesFile {
  return checkFile(validateExtraFile, doc, origin);
}

function checkFile<T>(validate: ((data: unknown) => data is T) & { errors?: ErrorObject[] | null }, doc: unknown, origin: string): T {
  if (validate(doc)) return doc;
  const error = validate.errors?.[0];
  const where = error ? describeLocation(doc, error.instancePath) : { text: 'document' };
  const what = error ? explain(error) : 'is invalid';
  throw new ChannelRulesError(`${origin}: ${where.text} ${what}`, origin, where.rowId);
}

/** Turns `/append/2/any/0/mediumMatches` into `row 3 of "append" (id "x"), at /any/0/mediumMatches`. */
function describeLocation(doc: unknown, pointer: string): { text: string; rowId?: string } {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const listEnd = parts[0] === 'insertBefore' ? 2 : 1;
  const index = Number(parts[listEnd]);
  const isRowList = ['rules', 'prepend', 'append', 'insertBefore'].includes(parts[0] ?? '');
  if (!isRowList || !Number.isInteger(index)) return { text: pointer === '' ? 'document' : `at ${pointer}` };
  let list: unknown = doc;
  for (const key of parts.slice(0, listEnd)) list = (list as Record<string, unknown> | undefined)?.[key];
  const row = Array.isArray(list) ? (list[index] as { id?: unknown } | undefined) : undefined;
  const rowId = typeof row?.id === 'string' ? row.id : undefined;
  const listName = parts.slice(0, listEnd).join('.');
  const rest = parts.slice(listEnd + 1).join('/');
  const text = `row ${index + 1} of "${listName}"${rowId ? ` (id "${rowId}")` : ''}${rest ? `, at /${rest},` : ''}`;
  return rowId ? { text, rowId } : { text };
}

function explain(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `has unknown field "${String(params['additionalProperty'])}"`;
  if (error.keyword === 'enum') return `${error.message ?? 'is not allowed'} (${JSON.stringify(params['allowedValues'])})`;
  return error.message ?? 'is invalid';
}

function assembleRows(
  base: readonly ChannelRule[],
  extra: ExtraRulesFile | undefined,
  extraOrigin: string,
): { row: ChannelRule; origin: string }[] {
  const tag = (origin: string) => (row: ChannelRule) => ({ row, origin });
  const rows = [...(extra?.prepend ?? []).map(tag(extraOrigin)), ...base.map(tag('built-in'))];
  for (const [beforeId, inserted] of Object.entries(extra?.insertBefore ?? {})) {
    const at = rows.findIndex((r) => r.row.id === beforeId);
    if (at < 0) {
      const first = inserted[0]?.id;
      throw new ChannelRulesError(`${extraOrigin}: insertBefore names row "${beforeId}", which does not exist`, extraOrigin, first);
    }
    rows.splice(at, 0, ...inserted.map(tag(extraOrigin)));
  }
  rows.push(...(extra?.append ?? []).map(tag(extraOrigin)));
  const seen = new Map<string, string>();
  for (const { row, origin } of rows) {
    const earlier = seen.get(row.id);
    if (earlier !== undefined) {
      const blame = origin === 'built-in' ? earlier : origin;
      throw new ChannelRulesError(`${blame}: row id "${row.id}" is used twice`, blame, row.id);
    }
    seen.set(row.id, origin);
  }
  return rows;
}

function compileRule(row: ChannelRule, origin: string): CompiledRule {
  const lower = (values: readonly string[]) => new Set(values.map((v) => v.trim().toLowerCase()));
  const regex = (pattern: string, field: string): RegExp => {
    try {
      return new RegExp(pattern, 'i');
    } catch (err) {
      throw new ChannelRulesError(`${origin}: row "${row.id}" has an invalid ${field} regex: ${(err as Error).message}`, origin, row.id);
    }
  };
  const conditions = row.any.map((c: RuleCondition): CompiledCondition => {
    const out: CompiledCondition = {};
    if (c.sourceIn) out.sourceIn = lower(c.sourceIn);
    if (c.sourceMatches) out.sourceMatches = regex(c.sourceMatches, 'sourceMatches');
    if (c.sourceCategoryIn) out.sourceCategoryIn = new Set(c.sourceCategoryIn);
    if (c.mediumIn) out.mediumIn = lower(c.mediumIn);
    if (c.mediumMatches) out.mediumMatches = regex(c.mediumMatches, 'mediumMatches');
    if (c.campaignMatches) out.campaignMatches = regex(c.campaignMatches, 'campaignMatches');
    if (c.clickIdIn) out.clickIdIn = c.clickIdIn;
    return out;
  });
  return { id: row.id, channel: row.channel, origin, conditions, row };
}
