// The alert spec as the service reads it, after validation (validate.ts). The OpenAPI component
// AutomationSpec describes the same shape to clients.
import type {
  AUTOMATION_FILTER_OPS, CONDITION_CHANGES, CONDITION_COMPARES, CONDITION_OPS, DELIVERY_CHANNELS, MetricName, PACING_MODES,
} from '@sightline/proto-schemas';

export type FilterOp = (typeof AUTOMATION_FILTER_OPS)[number];
export type ConditionOp = (typeof CONDITION_OPS)[number];
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];
export type PacingMode = (typeof PACING_MODES)[number];

export interface EventFilter {
  field: string;
  op: FilterOp;
  values: string[];
}

export interface GatherFilter {
  field: string;
  op: string;
  values: string[];
}

/**
 * One number: a /metrics window total (metric, filters), or a funnel's conversion (the share of
 * the people who entered a funnel that completed it, from GET /funnels/{id}/steps).
 */
export type GatherQuery =
  | { metric: MetricName; period?: string; filters?: GatherFilter[]; funnel?: undefined }
  | { funnel: string; period?: string; metric?: undefined; filters?: undefined };

/** What a funnel figure is called where a metric name would be. */
export const FUNNEL_CONVERSION = 'funnel_conversion';

export interface Condition {
  figure: string;
  op: ConditionOp;
  value: number;
  compare?: (typeof CONDITION_COMPARES)[number];
  change?: (typeof CONDITION_CHANGES)[number];
}

export interface Destination {
  channel: DeliveryChannel;
  to: string[];
}

export type Trigger =
  | { kind: 'event'; events: string[] }
  | { kind: 'schedule'; cron: string }
  | { kind: 'threshold'; cron: string };

export interface AutomationSpec {
  version: 1;
  trigger: Trigger;
  filters?: EventFilter[];
  /** Event alerts: events that happened longer ago than this ("90m", "24h", "7d") are skipped (backfills). */
  max_age?: string;
  gather?: Record<string, GatherQuery>;
  condition?: Condition;
  compose?: { template?: string; subject?: string; ai?: boolean };
  deliver: Destination[];
  pacing?: { mode: PacingMode };
}

export const pacingOf = (spec: AutomationSpec): PacingMode => spec.pacing?.mode ?? 'each';

export const MAX_AGE_LIMIT_MS = 365 * 86_400_000;
const DURATION = /^\s*(\d{1,6})\s*(m|h|d)\s*$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "90m", "24h", "7d" in milliseconds; null when it is not such a duration. */
export function durationMs(text: string): number | null {
  const match = DURATION.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : null;
}

/** The age past which an event alert skips an event, or null when it takes every event. */
export const maxAgeMsOf = (spec: AutomationSpec): number | null => (spec.max_age === undefined ? null : durationMs(spec.max_age));
