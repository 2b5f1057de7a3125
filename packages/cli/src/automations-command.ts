// `sightline automations chat add|list|remove`, `deliveries`, `retry`, `mailbox`, `tick`: the
// operator side of alerts, through the automations admin routes (/admin/automations/...). The Slack
// bot token goes in once, with `chat add`; nothing prints it back (the API does not return it).
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { adminRequest, type AdminConnection } from './admin-client';

type Row = Record<string, unknown>;

const when = (iso: unknown): string => (typeof iso === 'string' ? iso.replace(/\.\d{3}Z$/, 'Z') : '-');

/** Rows as an aligned text table. */
export function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  return [header, ...lines].map((cells) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

export function deliveriesTable(rows: readonly Row[]): string {
  if (rows.length === 0) return 'no deliveries';
  return table(
    ['ID', 'CHANNEL', 'TO', 'STATUS', 'ATTEMPTS', 'UPDATED', 'ERROR'],
    rows.map((r) => [String(r['id']), String(r['channel']), String(r['to']), String(r['status']), String(r['attempts']), when(r['updated_at']), r['error'] ? String(r['error']).slice(0, 100) : '-']),
  );
}

/** The bot token: --token-file (preferred) or --token. */
export function tokenOf(opts: { token?: string; tokenFile?: string }): string {
  if ((opts.token === undefined) === (opts.tokenFile === undefined)) throw new Error('pass exactly one of --token or --token-file');
  const token = opts.token ?? readFileSync(opts.tokenFile as string, 'utf8').trim();
  if (!token) throw new Error('the bot token is empty');
  return token;
}

export function registerAutomationsCommands(program: Command, conn: () => AdminConnection): void {
  const print = (value: unknown, json: boolean | undefined, text: () => string): void => {
    process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
  };
  const automations = program.command('automations').description('alerts (needs automations): chat connections, deliveries, retries, the local mailbox');
  const chat = automations.command('chat').description('the Slack workspace alerts of a Sightline workspace post to');

  chat
    .command('add')
    .description('connect (or reconnect) a Slack workspace with its app\'s bot token (scopes chat:write, channels:read, groups:read, channels:history)')
    .requiredOption('--workspace <id>', 'the Sightline workspace')
    .option('--token <xoxb>', 'bot token (visible in shell history: prefer --token-file)')
    .option('--token-file <path>', 'read the bot token from this file')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; token?: string; tokenFile?: string; json?: boolean }) => {
      const row = await adminRequest<Row>(conn(), 'POST', '/automations/chat/connections', { workspace_id: opts.workspace, provider: 'slack', bot_token: tokenOf(opts) });
      print(row, opts.json, () => `Slack workspace ${String(row['team_name'])} (${String(row['team_id'])}) connected to ${opts.workspace}`);
    });

  chat
    .command('list')
    .option('--workspace <id>', 'only this workspace')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const { data } = await adminRequest<{ data: Row[] }>(conn(), 'GET', `/automations/chat/connections${opts.workspace ? `?workspace_id=${encodeURIComponent(opts.workspace)}` : ''}`);
      print(data, opts.json, () => (data.length === 0 ? 'no chat connections (add one with `sightline automations chat add`)' : table(
        ['WORKSPACE', 'PROVIDER', 'TEAM', 'RATE LIMITED UNTIL', 'UPDATED'],
        data.map((r) => [String(r['workspace_id']), String(r['provider']), `${String(r['team_name'])} (${String(r['team_id'])})`, when(r['rate_limited_until']), when(r['updated_at'])]),
      )));
    });

  chat
    .command('remove')
    .requiredOption('--workspace <id>')
    .action(async (opts: { workspace: string }) => {
      await adminRequest(conn(), 'DELETE', `/automations/chat/connections/${encodeURIComponent(opts.workspace)}`);
      process.stdout.write(`disconnected the chat workspace of ${opts.workspace}\n`);
    });

  automations
    .command('deliveries')
    .description('deliveries, newest first (--status failed: the ones given up on, which `retry` sends again)')
    .option('--status <status>', 'queued | sending | sent | failed | skipped')
    .option('--automation <id>', 'only this alert')
    .option('--limit <n>', 'at most this many (500 at most)', '100')
    .option('--json', 'print JSON')
    .action(async (opts: { status?: string; automation?: string; limit: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: opts.limit, ...(opts.status ? { status: opts.status } : {}), ...(opts.automation ? { automation_id: opts.automation } : {}) });
      const { data } = await adminRequest<{ data: Row[] }>(conn(), 'GET', `/automations/deliveries?${query.toString()}`);
      print(data, opts.json, () => deliveriesTable(data));
    });

  automations
    .command('retry <deliveryId>')
    .description('send a failed (dead) delivery again')
    .action(async (deliveryId: string) => {
      await adminRequest(conn(), 'POST', `/automations/deliveries/${encodeURIComponent(deliveryId)}/retry`);
      process.stdout.write(`delivery ${deliveryId} queued again\n`);
    });

  automations
    .command('mailbox')
    .description('alert email kept by an instance with no SMTP server configured (SIGHTLINE_SMTP_URL unset)')
    .option('--to <address>', 'only messages to this address')
    .option('--limit <n>', 'at most this many', '20')
    .option('--json', 'print JSON')
    .action(async (opts: { to?: string; limit: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: opts.limit, ...(opts.to ? { to: opts.to } : {}) });
      const box = await adminRequest<{ email: string; data: Row[] }>(conn(), 'GET', `/automations/mailbox?${query.toString()}`);
      print(box, opts.json, () => {
        const note = box.email === 'smtp' ? 'email is sent over SMTP; the mailbox holds what was kept before SMTP was configured\n' : '';
        if (box.data.length === 0) return `${note}the mailbox is empty`;
        return note + box.data.map((m) => `--- ${when(m['created_at'])}  to ${String(m['to'])}\nSubject: ${String(m['subject'])}\n\n${String(m['text'])}\n`).join('\n');
      });
    });

  automations
    .command('tick')
    .description('evaluate the schedule and threshold alerts that are due now (instead of waiting for the minute)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const stats = await adminRequest<Row>(conn(), 'POST', '/automations/tick');
      print(stats, opts.json, () => `due ${String(stats['due'])}, fired ${String(stats['fired'])}, recovered ${String(stats['recovered'])}, scheduled ${String(stats['scheduled'])}, digests ${String(stats['digests'])}, ${String(stats['queries'])} queries, ${String(stats['duration_ms'])} ms`);
    });
}
