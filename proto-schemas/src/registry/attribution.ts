// Attribution models (DESIGN.md "Semantics decided here"). Lookback defaults to 90 days.

export const ATTRIBUTION_MODEL_NAMES = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay', 'last_non_direct', 'markov', 'shapley'] as const;

/** The rule models: each weighs the touches of one journey on its own. */
export const RULE_MODEL_NAMES = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay', 'last_non_direct'] as const;

export type RuleModelName = (typeof RULE_MODEL_NAMES)[number];

/** The data-driven models: a channel's credit depends on every journey of the window, converting or not. */
export const DATA_DRIVEN_MODEL_NAMES = ['markov', 'shapley'] as const;

export type DataDrivenModelName = (typeof DATA_DRIVEN_MODEL_NAMES)[number];

/** The channel of a visit without a referrer or campaign (what last_non_direct and exclude_direct skip). */
export const DIRECT_CHANNEL = 'Direct';

/**
 * Shapley credit is exact (every coalition enumerated) up to this many channels; past it, it is
 * estimated from SHAPLEY_SAMPLED_PERMUTATIONS random orderings and meta states the error bound.
 */
export const SHAPLEY_EXACT_MAX_CHANNELS = 16;
export const SHAPLEY_SAMPLED_PERMUTATIONS = 20_000;

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
  { name: 'last_non_direct', description: 'All credit to the last touch whose channel is not Direct; a journey of only Direct touches credits its last (Direct) touch.' },
  { name: 'markov', description: 'Data-driven, by channel: a first-order Markov chain (start, channels, conversion or null) over the touch sequences of the window\'s converting journeys and of its non-converting journeys; each channel\'s credit is its removal effect (the share of conversion probability lost when the channel is removed), normalised so credits sum to the conversions and revenue attributed.' },
  { name: 'shapley', description: `Data-driven, by channel: the Shapley value of each channel in the game whose coalition value v(S) is the conversions (or revenue) of the converting journeys whose set of channels lies within S. Exact (every coalition enumerated) up to ${SHAPLEY_EXACT_MAX_CHANNELS} channels, then estimated from ${SHAPLEY_SAMPLED_PERMUTATIONS} random channel orderings with the error bound stated in meta.definitions.` },
];
