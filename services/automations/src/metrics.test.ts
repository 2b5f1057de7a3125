// The automations metrics hook exports what it is told, with labels from its fixed sets.
import { Registry } from 'prom-client';
import { createAutomationsMetrics } from './metrics';

describe('automations metrics hook', () => {
  it('counts runs and deliveries and reports the backlog per channel, zero-filled', async () => {
    const registry = new Registry();
    const metrics = createAutomationsMetrics(registry);
    metrics.run('schedule', 'sent');
    metrics.run('schedule', 'sent');
    metrics.delivery('slack', 'retried');
    metrics.watchBacklog(async () => ({ email: 4 }));
    const text = await registry.metrics();
    expect(text).toContain('sightline_automations_runs_total{trigger="schedule",outcome="sent"} 2');
    expect(text).toContain('sightline_automations_deliveries_total{channel="slack",outcome="retried"} 1');
    expect(text).toContain('sightline_automations_delivery_backlog{channel="email"} 4');
    expect(text).toContain('sightline_automations_delivery_backlog{channel="slack"} 0');
  });

  it('counts budgeted emails and refusals by reason and action', async () => {
    const registry = new Registry();
    const metrics = createAutomationsMetrics(registry);
    expect(await registry.metrics()).toContain('sightline_automations_budgeted_emails_total 0');
    metrics.budgetedEmail();
    metrics.sendRefused('hour_budget', 'held');
    metrics.sendRefused('ip_literal', 'failed');
    const text = await registry.metrics();
    expect(text).toContain('sightline_automations_budgeted_emails_total 1');
    expect(text).toContain('sightline_automations_send_refusals_total{reason="hour_budget",action="held"} 1');
    expect(text).toContain('sightline_automations_send_refusals_total{reason="ip_literal",action="failed"} 1');
  });
});
