// The automations limit settings (issue 24) from the environment, and a bad value named.
import { loadConfig, sectionOf } from '@sightline/kit';
import { AUTOMATIONS_SETTINGS, SETTINGS_SECTIONS } from './settings';

const options = (env: Record<string, string>) => sectionOf(loadConfig(env, SETTINGS_SECTIONS), AUTOMATIONS_SETTINGS);

describe('automations limit settings', () => {
  it('reads the recipient domains, the email budget, the gather wait and retention', () => {
    expect(options({})).toEqual({});
    expect(options({
      SIGHTLINE_ALERT_EMAIL_DOMAINS: ' acme.com, @eu.acme.com ,',
      SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR: '50',
      SIGHTLINE_AUTOMATIONS_EMAILS_PER_DAY: '400',
      SIGHTLINE_AUTOMATIONS_GATHER_WAIT_MS: '5000',
      SIGHTLINE_AUTOMATIONS_RUN_RETENTION_DAYS: '30',
      SIGHTLINE_AUTOMATIONS_MAILBOX_RETENTION_DAYS: '7',
      SIGHTLINE_AUTOMATIONS_RETENTION_CRON: '0 3 * * *',
    })).toEqual({
      emailDomains: ['acme.com', '@eu.acme.com'], emailBudget: { perHour: 50, perDay: 400 }, gatherWaitMs: 5000,
      runRetentionDays: 30, mailboxRetentionDays: 7, retentionCron: '0 3 * * *',
    });
    expect(options({ SIGHTLINE_AUTOMATIONS_EMAILS_PER_DAY: '10' })).toEqual({ emailBudget: { perDay: 10 } });
  });

  it('refuses a bad value, naming the variable', () => {
    expect(() => options({ SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR: '0' })).toThrow(/SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR/);
    expect(() => options({ SIGHTLINE_ALERT_EMAIL_DOMAINS: 'acme.com; evil.test' })).toThrow(/SIGHTLINE_ALERT_EMAIL_DOMAINS/);
    expect(() => options({ SIGHTLINE_AUTOMATIONS_RUN_RETENTION_DAYS: 'forever' })).toThrow(/SIGHTLINE_AUTOMATIONS_RUN_RETENTION_DAYS/);
  });
});
