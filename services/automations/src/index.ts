// The automations module: alerts that watch the data and deliver by email (SMTP, nodemailer) and
// by team chat (Slack). It keeps alerts, runs, deliveries, digests and chat connections in its own
// Postgres schema `automations`, consumes the change messages of its event catalog, evaluates
// schedules and thresholds on a scheduling tick (once across replicas), gathers numbers through
// attribution.getMetrics within the workspace's analytics cap (slots from the gateway), and sends
// through a durable delivery queue, within each workspace's email budget. Writes and runs are announced
// through a transactional outbox (automation.created|updated|deleted|ran). Parts: README.md.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createOutbox, defineModule, sealingBox, type RunnableModule } from '@sightline/kit';
import { BACKGROUND_ANALYTICS_QUERIES } from '@sightline/proto-schemas';
import { automationsAdminRoutes } from './admin.routes';
import { alertsRpc } from './alerts/alerts.rpc';
import { ChatConnections } from './chat/chat.repo';
import type { AiSettings } from './compose/ai';
import { expireAllLeases } from './deliver/deliveries.repo';
import { createMailboxSender, createSmtpSender, type EmailSender } from './deliver/email';
import { DEFAULT_RETRY_POLICY } from './deliver/errors';
import { createSlackApi } from './deliver/slack';
import { createWorker } from './deliver/worker';
import { eventConsumers } from './events/events.consumers';
import { normaliseDomains } from './deliver/recipients';
import { createAnalyticsSlots } from './gather/analytics-slots';
import { createGatherer, type Gatherer } from './gather/gather';
import { createAutomationsMetrics } from './metrics';
import { DEFAULTS, type AutomationsOptions } from './options';
import { applyRetention } from './retention/retention';
import type { RunMakerDeps } from './runs/run-maker';
import { createScheduler } from './schedule/scheduler';

/** Analytics queries gathering sends at once, all workspaces together. */
const GATHER_CONCURRENCY = 4;
/** How long past its query's deadline a gather query's analytics slot is held at most (a crashed gatherer's lapses then). */
const SLOT_LEASE_MARGIN_MS = 5_000;

export function createAutomationsModule(options: AutomationsOptions = {}): RunnableModule {
  const leaseMs = options.deliveryLeaseMs ?? DEFAULTS.deliveryLeaseMs;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULTS.callTimeoutMs;
  if (leaseMs < 2 * callTimeoutMs) throw new Error(`automations: the delivery lease (${leaseMs} ms) must be at least twice the call timeout (${callTimeoutMs} ms)`);
  return defineModule({
    name: 'automations',
    needs: { postgres: { schema: 'automations', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') }, kv: true },
    async create(ctx) {
      const sql = ctx.postgres;
      const now = options.now ?? (() => new Date());
      const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
      const outbox = createOutbox<'automations'>(sql, ctx.bus, ctx.logger);
      const box = sealingBox<{ bot_token: string }>(options.credentialsKey ?? ctx.settings.cursorSecret, {
        salt: 'sightline/automations', info: 'chat bot token v1', remedy: 'connect the chat workspace again (`sightline automations chat add`)', setting: 'SIGHTLINE_CREDENTIALS_KEY',
      });
      const chat = new ChatConnections(sql, box);
      const slack = createSlackApi({ baseUrl: options.slackApiUrl ?? DEFAULTS.slackApiUrl, timeoutMs: callTimeoutMs });
      const email: EmailSender = options.smtpUrl
        ? createSmtpSender({ url: options.smtpUrl, from: options.emailFrom ?? DEFAULTS.emailFrom, timeoutMs: callTimeoutMs })
        : createMailboxSender(sql, now);
      if (!options.smtpUrl) ctx.logger.info('automations: no SMTP server configured (SIGHTLINE_SMTP_URL); alert email is kept in the local mailbox: `sightline automations mailbox`');
      const ai: AiSettings | null = options.llm ? { ...options.llm, timeoutMs: callTimeoutMs } : null;
      const metrics = createAutomationsMetrics(ctx.metrics);
      const emailDomains = normaliseDomains(options.emailDomains);
      // Gathering shares the workspace's analytics cap with people's queries (gather/analytics-slots.ts).
      // The tick waits for a slot up to gatherWaitMs; an API request (a dry run, POST /run) within its own deadline.
      const gatherTimeoutMs = Math.max(ctx.settings.rpcTimeoutMs, callTimeoutMs);
      const gathererWaiting = (waitMs: number): Gatherer => createGatherer(ctx.bus, {
        concurrency: GATHER_CONCURRENCY, perWorkspace: BACKGROUND_ANALYTICS_QUERIES, timeoutMs: gatherTimeoutMs,
        slots: createAnalyticsSlots(ctx.bus, {
          leaseMs: gatherTimeoutMs + SLOT_LEASE_MARGIN_MS, waitMs, callTimeoutMs: Math.max(1_000, Math.min(ctx.settings.rpcTimeoutMs, waitMs)), logger: ctx.logger,
        }),
      });
      const gatherWaitMs = options.gatherWaitMs ?? DEFAULTS.gatherWaitMs;
      const gatherer = gathererWaiting(gatherWaitMs);
      const apiGatherer = gathererWaiting(Math.min(gatherWaitMs, Math.floor(ctx.settings.rpcTimeoutMs / 3)));
      const runs: RunMakerDeps = { publicUrl: () => ctx.settings.publicUrl, ai, maxAttempts: options.retry?.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts, outbox, logger: ctx.logger };
      const worker = createWorker({
        sql, outbox, logger: ctx.logger, owner, email, slack, chatToken: (workspaceId) => chat.token(workspaceId),
        policy: { ...DEFAULT_RETRY_POLICY, ...options.retry }, now, leaseMs, batchSize: 50, concurrency: options.concurrency ?? DEFAULTS.concurrency,
        budget: { perHour: options.emailBudget?.perHour ?? DEFAULTS.emailsPerHour, perDay: options.emailBudget?.perDay ?? DEFAULTS.emailsPerDay },
        emailDomains, metrics,
      });
      const retention = () => applyRetention(sql, {
        runDays: options.runRetentionDays ?? DEFAULTS.runRetentionDays, mailboxDays: options.mailboxRetentionDays ?? DEFAULTS.mailboxRetentionDays,
      }, now());
      const kick = (): void => worker.kick();
      const scheduler = createScheduler({ sql, kv: ctx.kv, logger: ctx.logger, gatherer, runs, owner, now, leaseMs: 5 * 60_000, kick });

      return {
        rpc: alertsRpc({ sql, outbox, logger: ctx.logger, gatherer: apiGatherer, runs, aiConfigured: ai !== null, now, kick, chat, slack, emailDomains }),
        consumers: eventConsumers({ sql, logger: ctx.logger, gatherer, runs, now, kick }),
        schedules: [
          { name: 'automations-tick', cron: options.tickCron ?? DEFAULTS.tickCron, run: async () => void (await scheduler.tick()) },
          { name: 'automations-deliveries', cron: options.pollCron ?? DEFAULTS.pollCron, run: async () => void (await worker.runDue()) },
          { name: 'automations-retention', cron: options.retentionCron ?? DEFAULTS.retentionCron, run: async () => void (await retention()) },
        ],
        adminRoutes(router) {
          automationsAdminRoutes(router, { sql, outbox, chat, slack, scheduler, emailKind: () => email.kind, now, kick, workDue: () => worker.runDue(), publicUrl: () => ctx.settings.publicUrl, logger: ctx.logger, retention });
        },
        async start() {
          // Embedded: this process is the only worker, so deliveries its previous run held are
          // resolved now rather than when their leases run out.
          if (ctx.settings.embedded) await expireAllLeases(sql, now());
          outbox.start();
          kick();
        },
        async stop() {
          await worker.stop();
          email.close();
          await outbox.stop();
        },
      };
    },
  });
}

export type { AutomationsOptions } from './options';
