// The public API of alerts: GET/POST /automations, GET/PATCH/DELETE /automations/{id} and
// POST /automations/{id}/run, answered over the bus for the gateway. Writes and the change message
// they cause (automation.created|updated|deleted) commit in one transaction (the outbox).
import { randomUUID } from 'node:crypto';
import { ProblemError, type Outbox, type RpcMap, type SqlStore } from '@sightline/kit';
import type { ApiRequest, ApiResponse, AutomationField } from '@sightline/proto-schemas';
import type { Logger } from 'pino';
import type { Gatherer, WebsiteSnapshot, WorkspaceSnapshot } from '../gather/gather';
import { evaluate } from '../gather/condition';
import { funnelGoneReason, funnelsOf, missingFunnel, pauseAlerts } from '../events/funnel-deleted';
import { alertChange } from '../runs/announce';
import { insertPrepared, prepareRun, type RunMakerDeps } from '../runs/run-maker';
import { recentRuns } from '../runs/runs.repo';
import { nextRunAfter } from '../spec/cron';
import { eventCatalogView, EVENT_CATALOG, isCatalogType } from '../spec/event-catalog';
import type { AutomationSpec } from '../spec/spec';
import { TEMPLATE_IDS, TEMPLATES } from '../spec/templates';
import { validateSpec } from '../spec/validate';
import { countForWebsite, deleteAlert, getAlert, insertAlert, listAlerts, updateAlert, type AlertRow } from './alerts.repo';
import { outputScopesFor, outputScopesOf, requireScopes, saveOutputScopes, specScopes } from '../access/output-scopes';
import { presentAlert, presentAlertDetail } from './alerts.present';
import { checkChatChannels, dryRunGather, type SpecCheckDeps } from './spec-checks';
import { AUTOMATION_RUNS_RETURNED } from '@sightline/proto-schemas';

/** Decided: alerts per website (the spec leaves the maximum open). */
export const MAX_ALERTS_PER_WEBSITE = 2000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AlertsRpcDeps extends SpecCheckDeps {
  sql: SqlStore;
  outbox: Outbox<'automations'>;
  logger: Logger;
  gatherer: Gatherer;
  runs: RunMakerDeps;
  aiConfigured: boolean;
  now: () => Date;
  kick: () => void;
  /** The operator's allow-list of recipient email domains; null: any domain. */
  emailDomains: readonly string[] | null;
}

type Body = Record<string, unknown>;

function siteOf(request: ApiRequest): { website: WebsiteSnapshot; workspace: WorkspaceSnapshot } {
  // The gateway resolves a website for every automations operation; its absence is a wiring fault.
  if (!request.website) throw new Error(`${request.operation} needs a resolved website`);
  const { id, name, timezone, currency, plan } = request.workspace;
  return { website: { ...request.website }, workspace: { id, name, timezone, currency, plan } };
}

function notFound(id: string): ProblemError {
  return new ProblemError('not-found', { detail: `No alert ${id} on this website.`, remediation: 'List the alerts with GET /automations.' });
}

async function mustGet(deps: AlertsRpcDeps, request: ApiRequest): Promise<AlertRow> {
  const id = String(request.params['id'] ?? '');
  const website = siteOf(request).website;
  const alert = UUID.test(id) ? await getAlert(deps.sql, id.toLowerCase()) : null;
  if (!alert || alert.website_id !== website.id) throw notFound(id);
  return alert;
}

function firstRun(spec: AutomationSpec, timezone: string, now: Date): Date | null {
  return spec.trigger.kind === 'event' ? null : nextRunAfter(spec.trigger.cron, timezone, now);
}

const change = alertChange;

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * What a spec or status change does to the scheduler's state. A threshold keeps its firing state
 * through any edit but a change of trigger kind, so editing recipients, name or template re-sends
 * nothing; a changed gather or condition is evaluated at the next scheduling tick against the kept
 * state ("back to normal" when it stops holding, "Alert" only when it newly holds). A changed
 * trigger, or a resumed alert, starts from its next cron time (no catching up). Events waiting for a
 * digest are dropped only when what selects or paces them changed.
 */
function patchPlan(current: AlertRow, spec: AutomationSpec, fields: readonly AutomationField[], resumed: boolean, now: Date) {
  const specChanged = fields.includes('spec');
  const differs = (key: keyof AutomationSpec): boolean => specChanged && !sameJson(spec[key], current.spec[key]);
  const kindChanged = specChanged && spec.trigger.kind !== current.spec.trigger.kind;
  const watchChanged = spec.trigger.kind === 'threshold' && !kindChanged && (differs('gather') || differs('condition'));
  let nextRunAt: Date | null | undefined;
  if (differs('trigger') || resumed) nextRunAt = firstRun(spec, current.timezone, now);
  if (watchChanged) nextRunAt = now;
  return {
    resetState: kindChanged,
    nextRunAt,
    dropWaitingEvents: differs('trigger') || differs('filters') || differs('max_age') || differs('pacing'),
  };
}

export function alertsRpc(deps: AlertsRpcDeps): RpcMap<'automations'> {
  const checkSpec = async (raw: unknown, request: ApiRequest): Promise<AutomationSpec> => {
    const { website, workspace } = siteOf(request);
    const now = deps.now();
    const spec = validateSpec(raw, { timezone: website.timezone, now, aiConfigured: deps.aiConfigured, emailDomains: deps.emailDomains });
    // Before anything is read: a key may not make an alert show it what it could not read itself.
    requireScopes(request.key.scopes, specScopes(spec), 'Writing');
    await checkChatChannels(deps, spec, workspace.id);
    await dryRunGather(deps, spec, workspace, website, now);
    return spec;
  };

  return {
    'automations.listAutomations': async (request): Promise<ApiResponse> => {
      const { website } = siteOf(request);
      const data = (await listAlerts(deps.sql, website.id)).map((a) => presentAlert(a, request.key.scopes));
      return {
        status: 200,
        body: {
          data,
          meta: {
            website_id: website.id, website: website.domain, timezone: website.timezone, currency: website.currency,
            row_count: data.length, truncated: false, has_more: false,
            event_catalog: eventCatalogView(),
            templates: TEMPLATES.map(({ id, name, description, spec }) => ({ id, name, description, spec })),
          },
        },
      };
    },

    'automations.createAutomation': async (request): Promise<ApiResponse> => {
      const { website, workspace } = siteOf(request);
      const body = (request.body ?? {}) as Body;
      const name = body['name'];
      if (typeof name !== 'string' || name.trim() === '' || name.length > 200) throw new ProblemError('invalid-request', { detail: 'name is required (1 to 200 characters).', remediation: 'Give the alert a name.' });
      const templateId = body['template_id'];
      let rawSpec = body['spec'];
      if (templateId !== undefined) {
        const template = TEMPLATES.find((t) => t.id === templateId);
        if (!template) throw new ProblemError('invalid-request', { detail: `template_id ${JSON.stringify(templateId)} is not a starter template.`, remediation: 'Use a template id from GET /automations meta.templates, or send a spec.', allowed: TEMPLATE_IDS });
        if (rawSpec === undefined) {
          if (body['deliver'] === undefined) {
            throw new ProblemError('invalid-request', { detail: `The template ${template.id} needs deliver: where its messages go.`, remediation: 'Add deliver, e.g. [{"channel": "email", "to": ["team@example.com"]}], or send a whole spec.' });
          }
          rawSpec = { ...template.spec, deliver: body['deliver'] };
        }
      } else if (body['deliver'] !== undefined) {
        throw new ProblemError('unsupported-combination', { detail: 'deliver goes with template_id; a spec carries its own deliver.', remediation: 'Put deliver inside spec.' });
      }
      if (rawSpec === undefined) throw new ProblemError('invalid-request', { detail: 'Send a spec, a template_id, or both.', remediation: 'Add spec, or template_id with deliver.', allowed: TEMPLATE_IDS });
      const spec = await checkSpec(rawSpec, request);
      const now = deps.now();
      const alert = await deps.sql.transaction(async (tx) => {
        // Serialises creations on one website so the count cannot be raced past.
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`automations.create:${website.id}`]);
        if ((await countForWebsite(tx, website.id)) >= MAX_ALERTS_PER_WEBSITE) {
          throw new ProblemError('conflict', { detail: `This website has ${MAX_ALERTS_PER_WEBSITE} alerts, the most it can have.`, remediation: 'Delete alerts you no longer use (DELETE /automations/{id}).' });
        }
        const row = await insertAlert(tx, {
          id: randomUUID(), workspaceId: workspace.id, websiteId: website.id, name: name.trim(), templateId: typeof templateId === 'string' ? templateId : null,
          spec, workspace, website, nextRunAt: firstRun(spec, website.timezone, now), createdBy: `api:${request.key.id}`, now,
        });
        row.output_scopes = outputScopesFor(spec, request.key.scopes);
        await saveOutputScopes(tx, row.id, row.output_scopes);
        await deps.outbox.add(tx, { type: 'automation.created', source: `api:${request.key.id}`, workspace_id: row.workspace_id, website_id: row.website_id, payload: change(row, ['name', 'template_id', 'status', 'spec'], now) });
        return row;
      });
      deps.outbox.wake();
      return { status: 200, body: { data: presentAlert(alert, request.key.scopes) } };
    },

    'automations.getAutomation': async (request): Promise<ApiResponse> => {
      const alert = await mustGet(deps, request);
      const runs = await recentRuns(deps.sql, alert.id, AUTOMATION_RUNS_RETURNED);
      return { status: 200, body: { data: presentAlertDetail(alert, runs, request.key.scopes) } };
    },

    'automations.patchAutomation': async (request): Promise<ApiResponse> => {
      const current = await mustGet(deps, request);
      const body = (request.body ?? {}) as Body;
      const fields: AutomationField[] = [];
      const name = body['name'];
      if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 200)) throw new ProblemError('invalid-request', { detail: 'name must be 1 to 200 characters.', remediation: 'Send a non-empty name.' });
      const status = body['status'];
      if (status !== undefined && status !== 'active' && status !== 'paused') throw new ProblemError('invalid-request', { detail: `status ${JSON.stringify(status)} is not an alert status.`, remediation: 'Send active or paused.', allowed: ['active', 'paused'] });
      const spec = body['spec'] === undefined ? undefined : await checkSpec(body['spec'], request);
      if (typeof name === 'string' && name.trim() !== current.name) fields.push('name');
      if (spec && !sameJson(spec, current.spec)) fields.push('spec');
      if (status !== undefined && status !== current.status) fields.push('status');
      if (fields.length === 0) return { status: 200, body: { data: presentAlert(current, request.key.scopes) } };
      const now = deps.now();
      const effectiveSpec = fields.includes('spec') && spec ? spec : current.spec;
      const resumed = fields.includes('status') && status === 'active';
      // Resuming an alert whose funnel is gone would only pause it again: refused with the reason.
      if (resumed && !fields.includes('spec') && funnelsOf(current).length > 0) await dryRunGather(deps, current.spec, siteOf(request).workspace, siteOf(request).website, now);
      const plan = patchPlan(current, effectiveSpec, fields, resumed, now);
      const updated = await deps.sql.transaction(async (tx) => {
        const row = await updateAlert(tx, current.id, {
          ...(fields.includes('name') ? { name: (name as string).trim() } : {}),
          ...(fields.includes('spec') ? { spec: effectiveSpec, resetState: plan.resetState } : {}),
          ...(fields.includes('status') ? { status: status as 'active' | 'paused' } : {}),
          ...(plan.nextRunAt !== undefined ? { nextRunAt: plan.nextRunAt } : {}),
        }, now);
        if (fields.includes('spec')) {
          row.output_scopes = outputScopesFor(effectiveSpec, request.key.scopes);
          await saveOutputScopes(tx, row.id, row.output_scopes);
        }
        await tx.query('DELETE FROM digest_events WHERE automation_id = $1 AND $2', [current.id, plan.dropWaitingEvents]);
        await deps.outbox.add(tx, { type: 'automation.updated', source: `api:${request.key.id}`, workspace_id: row.workspace_id, website_id: row.website_id, payload: change(row, fields, now) });
        return row;
      });
      deps.outbox.wake();
      return { status: 200, body: { data: presentAlert(updated, request.key.scopes) } };
    },

    'automations.deleteAutomation': async (request): Promise<ApiResponse> => {
      const alert = await mustGet(deps, request);
      const now = deps.now();
      await deps.sql.transaction(async (tx) => {
        await deleteAlert(tx, alert.id);
        await deps.outbox.add(tx, { type: 'automation.deleted', source: `api:${request.key.id}`, workspace_id: alert.workspace_id, website_id: alert.website_id, payload: change(alert, [], now) });
      });
      deps.outbox.wake();
      return { status: 200, body: { data: { id: alert.id, deleted: true } } };
    },

    'automations.runAutomation': async (request): Promise<ApiResponse> => {
      const alert = await mustGet(deps, request);
      // A run sends what the alert gathers to its recipients, who may be this key's holder.
      requireScopes(request.key.scopes, outputScopesOf(alert), 'Running');
      const body = (request.body ?? {}) as Body;
      const test = body['test'] === true;
      const now = deps.now();
      let figures;
      let evaluation;
      if (alert.spec.gather) {
        const previous = alert.kind === 'threshold'
          ? (alert.spec.condition?.compare === 'previous_period' ? [alert.spec.condition.figure] : [])
          : alert.kind === 'schedule' ? Object.keys(alert.spec.gather) : [];
        const { results } = await deps.gatherer.gather([{ key: alert.id, workspace: alert.workspace, website: alert.website, gather: alert.spec.gather, previous }], now);
        const result = results.get(alert.id);
        const gone = missingFunnel(alert, result);
        if (gone !== null) {
          // Decided: 409 (the alert's own spec is what cannot run), and the alert is paused with the reason.
          await pauseAlerts({ sql: deps.sql, outbox: deps.outbox, logger: deps.logger }, [alert], (a) => funnelGoneReason(gone, now, a.timezone, 'missing'), now);
          throw new ProblemError('conflict', {
            detail: `The alert gathers from funnel ${gone}, which was deleted; the alert is paused (see status_reason).`,
            remediation: 'Choose another funnel in spec.gather (GET /funnels lists the website\'s funnels) with PATCH /automations/{id}, and set status to active.',
          });
        }
        if (!result || !result.ok) {
          throw new ProblemError('service-unavailable', { detail: `The alert's numbers could not be gathered now (${result && !result.ok ? result.error : 'no answer'}).`, remediation: 'Retry in a minute.', headers: { 'Retry-After': '30' } });
        }
        figures = result.figures;
        if (alert.spec.condition) evaluation = evaluate(alert.spec.condition, figures);
      }
      let event;
      if (alert.spec.trigger.kind === 'event') {
        const last = alert.last_event;
        const type = last && isCatalogType(last.type) ? last.type : alert.spec.trigger.events.find(isCatalogType);
        if (type) event = last && last.type === type ? { type, payload: last.payload, occurredAt: last.occurred_at } : { type, payload: EVENT_CATALOG[type].sample, occurredAt: now.toISOString(), sample: true };
      }
      const prepared = await prepareRun(deps.runs, {
        alert, trigger: 'manual', triggerKey: `manual:${randomUUID()}`, test,
        ...(event ? { event } : {}), ...(figures ? { figures } : {}), ...(evaluation ? { evaluation } : {}),
      });
      const inserted = await deps.sql.transaction((tx) => insertPrepared(tx, deps.runs, prepared, now));
      if (!inserted) throw new Error('a manual run collided with another run');
      deps.kick();
      return {
        status: 200,
        body: {
          data: {
            run_id: inserted.run.id, test, status: inserted.run.status, queued: prepared.composed.failed ? [] : alert.spec.deliver,
            composed_by: prepared.composed.composedBy, compose_note: prepared.composed.note,
          },
        },
      };
    },
  };
}
