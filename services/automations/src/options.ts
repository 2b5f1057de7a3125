// The module's settings. The CLI builds them from the environment (packages/cli/src/automations-config.ts,
// README "Configuration"); the module reads no environment itself.
import type { RetryPolicy } from './deliver/errors';

export interface AutomationsOptions {
  /** SMTP server, e.g. smtp://user:pass@mail.example.com:587. Without it, email goes to the local mailbox. */
  smtpUrl?: string;
  /** From address of alert email. Default "Sightline <alerts@localhost>". */
  emailFrom?: string;
  /** Base URL of Slack's Web API (tests point it at a local server). Default https://slack.com/api. */
  slackApiUrl?: string;
  /** OpenAI-compatible chat-completions endpoint for compose.ai: base URL (…/v1), model and key. */
  llm?: { url: string; model: string; apiKey?: string };
  /** Secret that seals chat bot tokens; default the runtime's cursor secret (as crm-sync's credentials). */
  credentialsKey?: string;
  /** Cron of the scheduling tick (node-cron, seconds allowed). Default every minute. */
  tickCron?: string;
  /** Cron of the delivery queue poll (new runs are sent at once; this picks up retries). Default every 5 seconds. */
  pollCron?: string;
  /** How long a claimed delivery stays reserved for its worker. Default 60 s; more than twice callTimeoutMs. */
  deliveryLeaseMs?: number;
  /** Deadline of one call to SMTP, Slack or the model. Default 20 s. */
  callTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Deliveries sent at once per process. Default 8. */
  concurrency?: number;
  /**
   * Email domains alerts may send to (an address at one of them or a subdomain of one); others are
   * refused when an alert is written. Unset: any domain (the send budget still bounds the volume).
   */
  emailDomains?: string[];
  /** Emails one workspace's alerts may send per UTC hour and per UTC day. Default 200 and 1,000. */
  emailBudget?: { perHour?: number; perDay?: number };
  /** How long a gather query waits for one of the workspace's analytics slots. Default 60 s. */
  gatherWaitMs?: number;
  /** Runs (with their deliveries) older than this are deleted, except each alert's newest 50. Default 90 days. */
  runRetentionDays?: number;
  /** Local mailbox messages older than this are deleted. Default 30 days. */
  mailboxRetentionDays?: number;
  /** When retention runs (node-cron). Default hourly, at minute 17. */
  retentionCron?: string;
  /** For tests: the clock. */
  now?: () => Date;
}

export const DEFAULTS = {
  emailFrom: 'Sightline <alerts@localhost>',
  slackApiUrl: 'https://slack.com/api',
  tickCron: '* * * * *',
  pollCron: '*/5 * * * * *',
  deliveryLeaseMs: 60_000,
  callTimeoutMs: 20_000,
  concurrency: 8,
  emailsPerHour: 200,
  emailsPerDay: 1_000,
  gatherWaitMs: 60_000,
  runRetentionDays: 90,
  mailboxRetentionDays: 30,
  retentionCron: '17 * * * *',
} as const;
