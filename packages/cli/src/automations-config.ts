// The automations settings that bound what alerts may cost the operator (issue 24): which email
// domains they may send to, how many emails a workspace's alerts may send, how long gathering waits
// for an analytics slot, and how long runs and the local mailbox are kept. Part of the automations
// section of the one configuration (settings.ts); the README's Configuration lists them.
import type { ConfigVariable } from '@sightline/kit';
import type { AutomationsOptions } from '@sightline/service-automations';

const integer = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });
const DOMAIN = '@?[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?';

export const AUTOMATIONS_LIMIT_VARIABLES: Record<string, ConfigVariable> = {
  SIGHTLINE_ALERT_EMAIL_DOMAINS: {
    schema: { type: 'string', pattern: `^\\s*${DOMAIN}(\\s*,\\s*${DOMAIN})*\\s*,?\\s*$` },
    description: 'Comma-separated email domains alert email may go to (an address at one of them or a subdomain); others are refused when an alert is written. Unset: any domain (IP addresses never).',
  },
  SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR: { schema: integer(1, 1_000_000), description: 'Emails one workspace\'s alerts may send per UTC hour; more are held until the hour ends. Default 200.' },
  SIGHTLINE_AUTOMATIONS_EMAILS_PER_DAY: { schema: integer(1, 10_000_000), description: 'Emails one workspace\'s alerts may send per UTC day; more are held until the day ends (skipped after a day held). Default 1000.' },
  SIGHTLINE_AUTOMATIONS_GATHER_WAIT_MS: { schema: integer(100, 600_000), description: 'How long a scheduled gather query waits for one of its workspace\'s analytics slots before its cron time is skipped. Default 60000.' },
  SIGHTLINE_AUTOMATIONS_RUN_RETENTION_DAYS: { schema: integer(1, 3650), description: 'Runs and their deliveries older than this are deleted, except each alert\'s newest 50. Default 90.' },
  SIGHTLINE_AUTOMATIONS_MAILBOX_RETENTION_DAYS: { schema: integer(1, 3650), description: 'Local mailbox messages older than this are deleted. Default 30.' },
  SIGHTLINE_AUTOMATIONS_RETENTION_CRON: { schema: { type: 'string', pattern: '^\\S+( \\S+){4,5}$' }, description: 'When retention runs: a cron of 5 or 6 fields. Default hourly at minute 17.' },
};

/** Adds the limit settings that are set to `options`. */
export function buildAutomationsLimits(values: Readonly<Record<string, string | number | boolean>>, options: AutomationsOptions): void {
  const number = (name: string): number | undefined => (values[name] === undefined ? undefined : Number(values[name]));
  const domains = values['SIGHTLINE_ALERT_EMAIL_DOMAINS'];
  if (domains !== undefined) {
    const list = String(domains).split(',').map((d) => d.trim()).filter((d) => d !== '');
    if (list.length > 0) options.emailDomains = list;
  }
  const perHour = number('SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR');
  const perDay = number('SIGHTLINE_AUTOMATIONS_EMAILS_PER_DAY');
  if (perHour !== undefined || perDay !== undefined) options.emailBudget = { ...(perHour !== undefined ? { perHour } : {}), ...(perDay !== undefined ? { perDay } : {}) };
  const wait = number('SIGHTLINE_AUTOMATIONS_GATHER_WAIT_MS');
  if (wait !== undefined) options.gatherWaitMs = wait;
  const runDays = number('SIGHTLINE_AUTOMATIONS_RUN_RETENTION_DAYS');
  if (runDays !== undefined) options.runRetentionDays = runDays;
  const mailDays = number('SIGHTLINE_AUTOMATIONS_MAILBOX_RETENTION_DAYS');
  if (mailDays !== undefined) options.mailboxRetentionDays = mailDays;
  const cron = values['SIGHTLINE_AUTOMATIONS_RETENTION_CRON'];
  if (cron !== undefined) options.retentionCron = String(cron);
}
