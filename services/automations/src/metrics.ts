// The automations service's own health metrics: a hook for its engineers to wire (create them once
// in the module's create() with ctx.metrics, then count where runs and deliveries settle). The
// runner already gives this service, with no code here, its RPC and consumer RED metrics, queue
// depth, outbox backlog and store timings; these add what only automations knows:
// - sightline_automations_runs_total{trigger, outcome}: runs by what started them (schedule, event,
//   manual) and how they ended (sent: something was delivered, quiet: the condition did not hold,
//   failed);
// - sightline_automations_deliveries_total{channel, outcome}: deliveries by channel (email, slack)
//   and outcome (delivered, retried, failed: given up);
// - sightline_automations_delivery_backlog{channel}: deliveries due and not yet sent, read from the
//   deliveries table when scraped (pass a reader to watchBacklog);
// - sightline_automations_budgeted_emails_total: emails counted against workspaces' send budgets
//   (deliver/budget.ts), and sightline_automations_send_refusals_total{reason, action}: emails not
//   sent when due: over the hourly or daily budget (held, then skipped), or to a recipient the
//   operator's rules refuse (failed). Wired by the delivery worker.
// Once wired, the automations dashboard and the PrometheusRule in the chart can use them: the
// dashboards test only accepts queries on metrics a running instance exports.
import { counterOf, memoizeFor, polledGauge, type ModuleContext } from '@sightline/kit';

type Registry = ModuleContext['metrics'];

export type RunTrigger = 'schedule' | 'event' | 'manual';
export type RunOutcome = 'sent' | 'quiet' | 'failed';
export type DeliveryChannel = 'email' | 'slack';
export type DeliveryOutcome = 'delivered' | 'retried' | 'failed';
export type RefusalReason = 'hour_budget' | 'day_budget' | 'recipient_domain' | 'ip_literal';
export type RefusalAction = 'held' | 'skipped' | 'failed';

export interface AutomationsMetrics {
  run(trigger: RunTrigger, outcome: RunOutcome): void;
  delivery(channel: DeliveryChannel, outcome: DeliveryOutcome): void;
  budgetedEmail(): void;
  sendRefused(reason: RefusalReason, action: RefusalAction): void;
  /** Reports the due deliveries per channel, read at most every 15 s while scraped. */
  watchBacklog(read: () => Promise<Partial<Record<DeliveryChannel, number>>>): void;
}

export function createAutomationsMetrics(registry: Registry): AutomationsMetrics {
  const runs = counterOf(registry, 'sightline_automations_runs_total', 'Automation runs by trigger (schedule, event, manual) and outcome (sent, quiet, failed).', ['trigger', 'outcome'] as const);
  const deliveries = counterOf(registry, 'sightline_automations_deliveries_total', 'Automation deliveries by channel (email, slack) and outcome (delivered, retried, failed).', ['channel', 'outcome'] as const);
  const budgeted = counterOf(registry, 'sightline_automations_budgeted_emails_total', 'Alert emails counted against their workspace\'s hourly and daily send budgets.', []);
  const refusals = counterOf(registry, 'sightline_automations_send_refusals_total', 'Alert emails not sent when due, by reason (hour_budget, day_budget, recipient_domain, ip_literal) and action (held, skipped, failed).', ['reason', 'action'] as const);
  const backlog = polledGauge(registry, { name: 'sightline_automations_delivery_backlog', help: 'Automation deliveries due and not yet sent, by channel.', labelNames: ['channel'] as const });
  return {
    run: (trigger, outcome) => runs.inc({ trigger, outcome }),
    delivery: (channel, outcome) => deliveries.inc({ channel, outcome }),
    budgetedEmail: () => budgeted.inc(),
    sendRefused: (reason, action) => refusals.inc({ reason, action }),
    watchBacklog(read) {
      const cached = memoizeFor(15_000, read);
      backlog.add(async () => {
        const due = await cached();
        return (['email', 'slack'] as const).map((channel) => ({ labels: { channel }, value: due[channel] ?? 0 }));
      });
    },
  };
}
