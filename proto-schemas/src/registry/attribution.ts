// Attribution models (DESIGN.md "Semantics decided here"). Lookback defaults to 90 days.

export const ATTRIBUTION_MODEL_NAMES = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'] as const;

export type AttributionModelName = (typeof ATTRIBUTION_MODEL_NAMES)[number];

export interface AttributionModelDefinition {
  name: AttributionModelName;
  description: string;
}

/** Used when a query needs a model and names none (stages, or group_by on credited metrics). */
export const DEFAULT_ATTRIBUTION_MODEL: AttributionModelName = 'last_touch';

export const DEFAULT_LOOKBACK_DAYS = 90;

export const MAX_ATTRIBUTION_MODELS = 5;

export const ATTRIBUTION_MODELS: readonly AttributionModelDefinition[] = [
  { name: 'first_touch', description: 'All credit to the first touch (session) inside the lookback window (90 days by default).' },
  { name: 'last_touch', description: 'All credit to the last touch before the outcome. The default when a model is implied.' },
  { name: 'linear', description: 'Credit split equally across every touch in the lookback window.' },
  { name: 'u_shaped', description: 'Position-based: 40% to the first touch, 40% to the last, 20% shared by the touches between. One touch gets 100%; two touches get 50% each.' },
  { name: 'time_decay', description: 'Credit weighted by recency with a 7-day half-life: a touch 7 days before the outcome counts half as much as one at the moment of the outcome. Weights are normalised to sum to 1.' },
];
