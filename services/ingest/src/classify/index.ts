// Classification of hits for the ingest service: see README.md in this folder.
export {
  createClassifier,
  buildClassifier,
  findExampleFailures,
  exampleHit,
  EXAMPLE_SITE,
  type Classification,
  type Classifier,
  type ClassifierOptions,
  type HitContext,
} from './classify';
export {
  loadChannelRules,
  buildRules,
  parseExtraRules,
  matchChannel,
  ChannelRulesError,
  CHANNEL_RULES_VERSION,
  BUILT_IN_CHANNELS,
  UNASSIGNED_CHANNEL,
  UNASSIGNED_RULE_ID,
  type LoadedRules,
  type CompiledRule,
} from './channel-rules';
export { openGeoLookup, NO_GEO_LOOKUP, type GeoLookup, type GeoInfo } from './geo';
export type { DeviceType } from './user-agent';
export type { ChannelRule, ExtraRulesFile, SourceEntry, SourceCategory, ClickIdName, ClickIds, UtmValues } from './rule-types';
