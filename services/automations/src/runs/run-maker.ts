// Turns a trigger into a run: composes the message (outside any transaction: a model may take
// seconds), then inserts the run with one queued delivery per recipient, inside the caller's
// transaction so it commits with whatever else the trigger changes (a schedule slot, a threshold's
// state, the event being taken off a digest).
import type { SqlExecutor } from '@sightline/kit';
import { compose, type ComposeEvent, type ComposedMessage, type RunTrigger } from '../compose/compose';
import type { AiSettings } from '../compose/ai';
import type { Evaluation } from '../gather/condition';
import { metricsLink, type Figure } from '../gather/gather';
import { linkOf } from '../spec/event-catalog';
import type { AlertRow } from '../alerts/alerts.repo';
import { insertRun, type DeliveryRow, type RunRow } from './runs.repo';

export interface RunInput {
  alert: AlertRow;
  trigger: RunTrigger;
  triggerKey: string;
  test: boolean;
  event?: ComposeEvent;
  digest?: { events: ComposeEvent[]; from: string; to: string };
  figures?: Record<string, Figure>;
  evaluation?: Evaluation;
}

export interface PreparedRun {
  input: RunInput;
  composed: ComposedMessage;
  link: string;
}

export interface RunMakerDeps {
  publicUrl: () => string;
  ai: AiSettings | null;
  maxAttempts: number;
}

export function linkFor(input: RunInput, publicUrl: string): string {
  const base = publicUrl.replace(/\/$/, '');
  const { alert } = input;
  const website = encodeURIComponent(alert.website.domain);
  if (input.event) {
    const path = linkOf(input.event.type, input.event.payload);
    return `${base}${path}${path.includes('?') ? '&' : '?'}website=${website}`;
  }
  if (input.digest) {
    const types = alert.spec.trigger.kind === 'event' ? alert.spec.trigger.events.join(',') : '';
    return `${base}/v1/changes?website=${website}&types=${encodeURIComponent(types)}&since=${encodeURIComponent(input.digest.from)}`;
  }
  const gather = alert.spec.gather ?? {};
  const condition = alert.spec.condition ? gather[alert.spec.condition.figure] : undefined;
  const queries = condition ? [condition] : Object.values(gather);
  return queries.length > 0 ? metricsLink(base, alert.website.domain, queries) : `${base}/v1/automations/${alert.id}?website=${website}`;
}

export async function prepareRun(deps: RunMakerDeps, input: RunInput): Promise<PreparedRun> {
  const link = linkFor(input, deps.publicUrl());
  const composed = await compose(
    {
      alert: { id: input.alert.id, name: input.alert.name, spec: input.alert.spec, domain: input.alert.website.domain, timezone: input.alert.timezone, currency: input.alert.currency },
      trigger: input.trigger,
      test: input.test,
      ...(input.event ? { event: input.event } : {}),
      ...(input.digest ? { digest: input.digest } : {}),
      ...(input.figures ? { figures: input.figures } : {}),
      ...(input.evaluation ? { evaluation: input.evaluation } : {}),
      link,
    },
    deps.ai,
  );
  return { input, composed, link };
}

export async function insertPrepared(tx: SqlExecutor, deps: RunMakerDeps, prepared: PreparedRun, now: Date): Promise<{ run: RunRow; deliveries: DeliveryRow[] } | null> {
  const { input, composed, link } = prepared;
  return insertRun(tx, {
    automationId: input.alert.id,
    workspaceId: input.alert.workspace_id,
    trigger: input.trigger,
    triggerKey: input.triggerKey,
    test: input.test,
    message: composed.message,
    composedBy: composed.composedBy,
    composeNote: composed.note,
    link,
    deliver: input.alert.spec.deliver,
    maxAttempts: deps.maxAttempts,
    now,
  });
}
