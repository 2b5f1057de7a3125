// Operator routes, on the admin port (under /admin, behind the admin token):
//   POST   /automations/chat/connections               connect a workspace's Slack {workspace_id, bot_token}; 201 new, 200 replaced
//   GET    /automations/chat/connections[?workspace_id=]
//   DELETE /automations/chat/connections/:workspace_id  disconnect (the sealed token is deleted)
//   GET    /automations/deliveries[?status=failed&automation_id=&limit=]
//   POST   /automations/deliveries/:id/retry           a failed (dead) or skipped delivery goes back to the queue
//   POST   /automations/deliveries/work                send what is due now (the queue is also polled every few seconds)
//   GET    /automations/mailbox[?to=&limit=]           email kept here when no SMTP server is configured
//   POST   /automations/tick                           run a scheduling tick now (stats; 409 when another replica holds the slot)
//   GET    /automations/scheduler                      the last tick's stats
//   POST   /automations/retention                      delete what is past its retention now (also on its own cron)
// No answer carries a bot token.
import type { NextFunction, Request, Response, Router } from 'express';
import type { Logger } from 'pino';
import { ProblemError, renderProblem, requestIdMiddleware, requestIdOf, sendProblem, type Outbox, type SqlStore } from '@sightline/kit';
import { DELIVERY_STATUSES } from '@sightline/proto-schemas';
import { presentDelivery } from './alerts/alerts.present';
import type { ChatConnections } from './chat/chat.repo';
import { getDelivery, listDeliveries, requeue } from './deliver/deliveries.repo';
import { DeliveryError } from './deliver/errors';
import type { SlackApi } from './deliver/slack';
import { settleRun } from './runs/runs.repo';
import type { RetentionStats } from './retention/retention';
import type { Scheduler } from './schedule/scheduler';

export interface AdminDeps {
  sql: SqlStore;
  outbox: Outbox<'automations'>;
  chat: ChatConnections;
  slack: SlackApi;
  scheduler: Scheduler;
  emailKind: () => 'smtp' | 'mailbox';
  now: () => Date;
  kick: () => void;
  /** Works the due deliveries now; resolves with how many were processed. */
  workDue: () => Promise<number>;
  publicUrl: () => string;
  logger: Logger;
  /** Applies retention now; resolves with what was deleted. */
  retention: () => Promise<RetentionStats>;
}

type Handler = (req: Request) => Promise<{ status: number; body: unknown }>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const invalid = (detail: string, allowed?: readonly string[]): ProblemError =>
  new ProblemError('invalid-request', { detail, remediation: 'Correct the request and send it again.', ...(allowed ? { allowed } : {}) });
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const limitOf = (v: unknown): number => Math.min(500, Math.max(1, Number(text(v) ?? 100) || 100));

export function automationsAdminRoutes(router: Router, deps: AdminDeps): void {
  const route = (handler: Handler) => (req: Request, res: Response, next: NextFunction) => {
    if (!requestIdOf(res)) requestIdMiddleware(req, res, () => undefined);
    handler(req).then(
      ({ status, body }) => res.status(status).json(body),
      (error: unknown) => {
        const problem = renderProblem(error, requestIdOf(res), deps.publicUrl());
        if (problem.unexpected) deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'automations admin request failed');
        if (res.headersSent) return next(error);
        sendProblem(res, problem);
      },
    );
  };

  router.post('/automations/chat/connections', route(async (req) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const workspaceId = text(body['workspace_id']);
    const token = text(body['bot_token']);
    const provider = body['provider'] ?? 'slack';
    if (!workspaceId || workspaceId.length > 200) throw invalid('workspace_id is required.');
    if (provider !== 'slack') throw invalid(`provider ${JSON.stringify(provider)} is not supported.`, ['slack']);
    if (!token || token.length > 500) throw invalid('bot_token is required: the Slack app\'s bot token (xoxb-…).');
    let team: { teamId: string; team: string };
    try {
      team = await deps.slack.authTest(token);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (error instanceof DeliveryError && !error.retryable) throw invalid(`Slack refused the token (${reason}).`);
      throw new ProblemError('service-unavailable', { detail: `Slack could not be reached to check the token (${reason}).`, remediation: 'Retry in a minute.' });
    }
    const created = await deps.chat.save({ workspaceId, teamId: team.teamId, teamName: team.team, token, now: deps.now() });
    deps.logger.info({ workspace: workspaceId, team: team.teamId, created }, 'automations: Slack workspace connected');
    return { status: created ? 201 : 200, body: await deps.chat.get(workspaceId) };
  }));

  router.get('/automations/chat/connections', route(async (req) => ({ status: 200, body: { data: await deps.chat.list(text(req.query['workspace_id'])) } })));

  router.delete('/automations/chat/connections/:workspaceId', route(async (req) => {
    const workspaceId = String(req.params['workspaceId']);
    if (!(await deps.chat.remove(workspaceId))) throw new ProblemError('not-found', { detail: `No chat connection for workspace ${workspaceId}.`, remediation: 'List them with `sightline automations chat list`.' });
    return { status: 200, body: { workspace_id: workspaceId, removed: true } };
  }));

  router.get('/automations/deliveries', route(async (req) => {
    const status = text(req.query['status']);
    if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) throw invalid(`status ${JSON.stringify(status)} is not a delivery status.`, DELIVERY_STATUSES);
    const automationId = text(req.query['automation_id']);
    if (automationId !== undefined && !UUID.test(automationId)) throw invalid('automation_id must be a UUID.');
    const rows = await listDeliveries(deps.sql, { ...(status ? { status } : {}), ...(automationId ? { automationId } : {}), limit: limitOf(req.query['limit']) });
    return { status: 200, body: { data: rows.map((r) => ({ ...presentDelivery(r, false), run_id: r.run_id, automation_id: r.automation_id, workspace_id: r.workspace_id, updated_at: r.updated_at.toISOString() })) } };
  }));

  router.post('/automations/deliveries/:id/retry', route(async (req) => {
    const id = String(req.params['id']);
    const notFound = new ProblemError('not-found', { detail: `No delivery ${id}.`, remediation: 'List them with `sightline automations deliveries --status failed`.' });
    if (!UUID.test(id)) throw notFound;
    const row = await deps.sql.transaction(async (tx) => {
      const run = await getDelivery(tx, id);
      if (run) await tx.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [run.run_id]);
      const current = await getDelivery(tx, id, true);
      if (!current) throw notFound;
      if (current.status !== 'failed' && current.status !== 'skipped') {
        throw new ProblemError('conflict', { detail: `Only a failed or skipped delivery can be retried; this one is ${current.status}.`, remediation: 'Wait for it to end; queued deliveries are retried on their own.' });
      }
      const requeued = await requeue(tx, id, deps.now());
      await settleRun(tx, current.run_id, deps.now());
      return requeued;
    });
    deps.kick();
    return { status: 200, body: { data: row ? presentDelivery(row, false) : null } };
  }));

  router.post('/automations/deliveries/work', route(async () => ({ status: 200, body: { processed: await deps.workDue() } })));

  router.get('/automations/mailbox', route(async (req) => {
    const to = text(req.query['to'])?.toLowerCase();
    const result = await deps.sql.query<{ id: string; delivery_id: string; recipient: string; subject: string; text_body: string; created_at: Date }>(
      `SELECT id::text AS id, delivery_id::text AS delivery_id, recipient, subject, text_body, created_at FROM mailbox
       WHERE ($1::text IS NULL OR recipient = $1) ORDER BY id DESC LIMIT $2`,
      [to ?? null, limitOf(req.query['limit'])],
    );
    return {
      status: 200,
      body: {
        email: deps.emailKind(),
        data: result.rows.map((r) => ({ id: r.id, delivery_id: r.delivery_id, to: r.recipient, subject: r.subject, text: r.text_body, created_at: r.created_at.toISOString() })),
      },
    };
  }));

  router.post('/automations/tick', route(async () => {
    const stats = await deps.scheduler.tick();
    if (stats === null) throw new ProblemError('conflict', { detail: 'Another replica (or a tick in flight) holds this second\'s scheduling slot.', remediation: 'Try again in a second.' });
    return { status: 200, body: stats };
  }));

  router.get('/automations/scheduler', route(async () => ({ status: 200, body: { last_tick: deps.scheduler.lastTick() } })));

  router.post('/automations/retention', route(async () => ({ status: 200, body: await deps.retention() })));
}
