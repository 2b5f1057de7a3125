// GET /paths: what labels each step of a touch sequence.

export const PATH_STEP_NAMES = ['channel', 'source', 'medium', 'campaign'] as const;

export type PathStepName = (typeof PATH_STEP_NAMES)[number];

export interface PathStepDefinition { name: PathStepName; description: string }

export const DEFAULT_PATH_STEP: PathStepName = 'channel';

/** Marks a path cut at max_touches, so journeys with the same start group together. */
export const PATH_TRUNCATION_MARKER = '...';

/** The only step of a path for an outcome with no journey at all. */
export const UNATTRIBUTED_LABEL = 'Unattributed';

/** The label of a step whose touch has no value for the step (no source, no campaign, ...). */
export const EMPTY_STEP_LABEL = '(none)';

/**
 * How a touch is labelled. Decided: every touch (session) is one step, so consecutive touches with
 * the same label are NOT collapsed: three organic visits then a direct one is [Organic Search,
 * Organic Search, Organic Search, Direct], a different journey from one organic visit then a direct one.
 */
export const PATH_STEPS: readonly PathStepDefinition[] = [
  { name: 'channel', description: 'Each touch labelled by its channel (the default).' },
  { name: 'source', description: 'Each touch labelled by its source; touches without one show as (none).' },
  { name: 'medium', description: 'Each touch labelled by its medium; touches without one show as (none).' },
  { name: 'campaign', description: 'Each touch labelled by its campaign; touches without one show as (none).' },
];
