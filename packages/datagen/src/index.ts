// @sightline/datagen: a deterministic, seeded generator of a realistic Sightline workspace.
export { generateWorkspace, type Workspace, type WorkspaceStream } from './generate';
export { sendWorkspace, type SendOptions, type SendResult } from './send';
export { Rng, WeightedTable, hash32, hashString, apportion } from './random';
export {
  AD_PLATFORMS, CHANNELS, COUNTRIES, BROWSERS, PRODUCTS, CRM_STAGES, CONVERSION_NAMES,
  type AdPlatform, type CampaignDef, type ChannelDef, type ChannelKey, type CrmStage, type ConversionName,
} from './model';
export type * from './types';
