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
  gather?: Record<string, GatherQuery>;
  condition?: Condition;
  compose?: { template?: string; subject?: string; ai?: boolean };
  deliver: Destination[];
  pacing?: { mode: PacingMode };
}

export const pacingOf = (spec: AutomationSpec): PacingMode => spec.pacing?.mode ?? 'each';
