// Turns a trigger into a run: composes the message (outside any transaction: a model may take
// seconds), then inserts the run with one queued delivery per recipient, inside the caller's
// transaction so it commits with whatever else the trigger changes (a schedule slot, a threshold's
// state, the event being taken off a digest). A message that could not be composed (a template past
// its render budget) makes a failed run with no deliveries: its note says what to change.
import type { Outbox, SqlExecutor } from '@sightline/kit';
import type { Logger } from 'pino';
import { compose, type ComposeEvent, type ComposedMessage, type RunTrigger } from '../compose/compose';
import type { AiSettings } from '../compose/ai';
import type { Evaluation } from '../gather/condition';
import { metricsLink, type Figure } from '../gather/gather';
import { linkOf } from '../spec/event-catalog';
import type { AlertRow } from '../alerts/alerts.repo';
import { shownEvent } from '../access/output-scopes';
import { announceRun } from './announce';
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
  /**
   * Announces a run that fails as it is made (automation.ran; settled runs are announced by the
   * worker), and an alert a run pauses (its funnel was deleted).
   */
  outbox: Outbox<'automations'>;
  /** Where a model's own error text goes (runs show a fixed note). */
  logger?: Logger;
}

export function linkFor(input: RunInput, publicUrl: string): string {
  const base = publicUrl.replace(/\/$/, '');
  const { alert } = input;
  const website = encodeURIComponent(alert.website.domain);
  if (input.event?.sample) {
    // The sample names no real record: link to where real events of the type will show.
    return `${base}/v1/changes?website=${website}&types=${encodeURIComponent(input.event.type)}`;
  }
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
      // Personal fields as the alert's output may show them (access/output-scopes.ts).
      ...(input.event ? { event: shownEvent(input.alert, input.event) } : {}),
      ...(input.digest ? { digest: { ...input.digest, events: input.digest.events.map((e) => shownEvent(input.alert, e)) } } : {}),
      ...(input.figures ? { figures: input.figures } : {}),
      ...(input.evaluation ? { evaluation: input.evaluation } : {}),
      link,
    },
    deps.ai,
  );
  if (composed.diagnostic) deps.logger?.warn({ automation: input.alert.id, detail: composed.diagnostic }, `automations: ${composed.note ?? 'the model failed'}`);
  return { input, composed, link };
}

export async function insertPrepared(tx: SqlExecutor, deps: RunMakerDeps, prepared: PreparedRun, now: Date): Promise<{ run: RunRow; deliveries: DeliveryRow[] } | null> {
  const { input, composed, link } = prepared;
  const made = await insertRun(tx, {
    automationId: input.alert.id,
    workspaceId: input.alert.workspace_id,
    trigger: input.trigger,
    triggerKey: input.triggerKey,
    test: input.test,
    message: composed.message,
    composedBy: composed.composedBy,
    composeNote: composed.note,
    link,
    deliver: composed.failed ? [] : input.alert.spec.deliver,
    maxAttempts: deps.maxAttempts,
    now,
  });
  if (!made || !composed.failed) return made;
  const failed = (await tx.query<RunRow>(
    `UPDATE runs SET status = 'failed', finished_at = $2 WHERE id = $1
     RETURNING id::text AS id, automation_id::text AS automation_id, trigger, trigger_key, test, status, message, composed_by, compose_note, link, started_at, finished_at`,
    [made.run.id, now],
  )).rows[0] as RunRow;
  await announceRun(tx, deps.outbox, failed);
  return { run: failed, deliveries: [] };
}
