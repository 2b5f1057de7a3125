import { Command } from 'commander';
import { adminConnection, adminRequest } from './admin-client';
import { registerAutomationsCommands } from './automations-command';
import { registerAttributionCommands } from './attribution-command';
import { registerBusCommands } from './bus-command';
import { registerConnectionsCommands } from './connections-command';
import { registerFunnelsCommands } from './funnels-command';
import { registerImportCommand } from './import-command';
import { MODULE_REGISTRY } from './registry';


type Row = Record<string, unknown>;

function positive(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${flag} must be a positive whole number, got "${value}"`);
  return n;
}

export async function main(argv: string[]): Promise<void> {
  const program = new Command('sightline')
    .description('Sightline: attribution analytics you can host yourself.')
    .option('--admin-url <url>', 'admin API of a running instance (default: $SIGHTLINE_ADMIN_URL or http://localhost:9090)')
    .option('--admin-token <token>', 'admin token (default: $SIGHTLINE_ADMIN_TOKEN or ./data/admin-token)');

  program
    .command('start')
    .description('run Sightline modules in this process (embedded stores unless server URLs are set)')
    .option('--target <names>', 'all, or comma-separated module names')
    .option('--list-targets', 'print the module names and exit')
    .action(async (opts: { target?: string; listTargets?: boolean }) => {
      if (opts.listTargets) {
        for (const entry of MODULE_REGISTRY) process.stdout.write(`${entry.name}\n`);
        return;
      }
      const { configFromEnvironment, startProcess } = await import('./start.js');
      await startProcess(configFromEnvironment(opts.target ? { target: opts.target } : {}));
    });

  const conn = () => adminConnection(program.opts(), process.env);
  const print = (value: unknown, json: boolean | undefined, table: () => string) => {
    process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${table()}\n`);
  };

  const workspaces = program.command('workspaces').description('manage workspaces');
  workspaces
    .command('create')
    .requiredOption('--name <name>')
    .option('--timezone <iana>', 'workspace timezone', 'UTC')
    .option('--currency <code>', 'ISO 4217 currency', 'USD')
    .option('--plan <plan>', 'free | pro | business | agency | internal', 'free')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; timezone: string; currency: string; plan: string; json?: boolean }) => {
      const ws = await adminRequest<Row>(conn(), 'POST', '/workspaces', { name: opts.name, timezone: opts.timezone, currency: opts.currency, plan: opts.plan });
      print(ws, opts.json, () => `workspace ${String(ws['id'])} (${String(ws['name'])}, ${String(ws['timezone'])}, ${String(ws['currency'])}, ${String(ws['plan'])})`);
    });
  workspaces
    .command('list')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { data } = await adminRequest<{ data: Row[] }>(conn(), 'GET', '/workspaces');
      print(data, opts.json, () => data.map((w) => `${String(w['id'])}  ${String(w['name'])}  ${String(w['timezone'])}  ${String(w['currency'])}  ${String(w['plan'])}`).join('\n'));
    });

  const websites = program.command('websites').description('manage websites');
  websites
    .command('add')
    .requiredOption('--workspace <id>')
    .requiredOption('--domain <domain>')
    .option('--timezone <iana>', "defaults to the workspace's")
    .option('--currency <code>', "defaults to the workspace's")
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; domain: string; timezone?: string; currency?: string; json?: boolean }) => {
      const site = await adminRequest<Row>(conn(), 'POST', `/workspaces/${encodeURIComponent(opts.workspace)}/websites`, { domain: opts.domain, timezone: opts.timezone, currency: opts.currency });
      print(site, opts.json, () => `website ${String(site['domain'])} (${String(site['id'])}), tracker id ${String(site['public_id'])}\nidentify secret ${String(site['identify_secret'])} (keep it on your backend: it signs identify() calls)`);
    });
  websites
    .command('list')
    .requiredOption('--workspace <id>')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const { data } = await adminRequest<{ data: Row[] }>(conn(), 'GET', `/workspaces/${encodeURIComponent(opts.workspace)}/websites`);
      print(data, opts.json, () => data.map((w) => `${String(w['domain'])}  ${String(w['id'])}  ${String(w['timezone'])}  ${String(w['currency'])}  identify secret ${String(w['identify_secret'])}`).join('\n'));
    });

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .requiredOption('--workspace <id>')
    .option('--name <name>', 'a label for the key')
    .option('--scopes <list>', 'comma-separated scopes (default: all, pii:read included)')
    .option('--plan <plan>', "defaults to the workspace's plan")
    .option('--websites <domains>', 'comma-separated domains (default: every website of the workspace)')
    .option('--json', 'print {key, key_id, ...} as JSON')
    .action(async (opts: { workspace: string; name?: string; scopes?: string; plan?: string; websites?: string; json?: boolean }) => {
      const created = await adminRequest<Row>(conn(), 'POST', '/keys', {
        workspace_id: opts.workspace,
        ...(opts.name ? { name: opts.name } : {}),
        ...(opts.scopes ? { scopes: opts.scopes } : {}),
        ...(opts.plan ? { plan: opts.plan } : {}),
        ...(opts.websites ? { websites: opts.websites } : {}),
      });
      print(created, opts.json, () => `${String(created['key'])}\n(key id ${String(created['key_id'])}; shown once: store it now)`);
    });
  keys
    .command('list')
    .option('--workspace <id>')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const query = opts.workspace ? `?workspace_id=${encodeURIComponent(opts.workspace)}` : '';
      const { data } = await adminRequest<{ data: Row[] }>(conn(), 'GET', `/keys${query}`);
      print(data, opts.json, () => data.map((k) => `${String(k['key_id'])}  ${String(k['name'])}  ${(k['scopes'] as string[]).join(',')}  ${k['revoked_at'] ? 'revoked' : 'active'}`).join('\n'));
    });
  keys
    .command('revoke <keyId>')
    .action(async (keyId: string) => {
      await adminRequest(conn(), 'DELETE', `/keys/${encodeURIComponent(keyId)}`);
      process.stdout.write(`revoked ${keyId}\n`);
    });

  registerConnectionsCommands(program, conn);
  registerAttributionCommands(program, conn);
  registerAutomationsCommands(program, conn);
  registerFunnelsCommands(program, conn);
  registerBusCommands(program, conn);

  program
    .command('seed')
    .description('generate a realistic workspace and send it through the public ingestion paths of a running instance')
    .requiredOption('--website <domain>', 'an existing website to fill')
    .option('--days <n>', 'length of the window, ending today', '90')
    .option('--visitors <n>', 'people whose first visit falls in the window', '10000')
    .option('--seed <n>', 'random seed: the same seed gives the same data', '42')
    .option('--url <url>', 'public base URL (default: $SIGHTLINE_PUBLIC_URL or http://localhost:$SIGHTLINE_PORT)')
    .option('--concurrency <n>', 'requests in flight', '8')
    .action(async (opts: { website: string; days: string; visitors: string; seed: string; url?: string; concurrency: string }) => {
      const url = opts.url ?? process.env['SIGHTLINE_PUBLIC_URL'] ?? `http://localhost:${process.env['SIGHTLINE_PORT'] ?? '8080'}`;
      const started = Date.now();
      const { seedWebsite } = await import('./seed.js');
      const result = await seedWebsite(conn(), {
        website: opts.website,
        days: positive(opts.days, '--days'),
        visitors: positive(opts.visitors, '--visitors'),
        seed: positive(opts.seed, '--seed'),
        url,
        concurrency: positive(opts.concurrency, '--concurrency'),
        progress: process.stderr.isTTY === true,
      });
      const seconds = (Date.now() - started) / 1000;
      const events = result.stats.collectEvents + result.stats.serverEvents;
      process.stdout.write(
        `seeded ${opts.website}: ${result.stats.people} people, ${result.stats.sessions} sessions, ${events} events ` +
          `(${result.stats.conversions.purchase} purchases) in ${seconds.toFixed(1)} s; ${result.rejected} rejected, ${result.failed} failed requests\n`,
      );
      if (result.failed > 0) throw new Error(`some requests failed: ${result.failures.join('; ')}`);
    });

  registerImportCommand(program, conn);

  program
    .command('mcp')
    .description('serve the public API to AI agents as MCP tools over stdio (read operations and POST /events)')
    .option('--url <url>', 'public API base URL (default: $SIGHTLINE_URL, $SIGHTLINE_PUBLIC_URL or http://localhost:$SIGHTLINE_PORT)')
    .option('--api-key <key>', 'API key the tools call with (default: $SIGHTLINE_API_KEY; prefer the variable, a flag shows in the process list)')
    .action(async (opts: { url?: string; apiKey?: string }) => {
      const apiKey = opts.apiKey ?? process.env['SIGHTLINE_API_KEY'];
      if (!apiKey) throw new Error('sightline mcp needs an API key: set SIGHTLINE_API_KEY or pass --api-key');
      const baseUrl = opts.url ?? process.env['SIGHTLINE_URL'] ?? process.env['SIGHTLINE_PUBLIC_URL'] ?? `http://localhost:${process.env['SIGHTLINE_PORT'] ?? '8080'}`;
      const { runMcpServer } = await import('./mcp/mcp.server.js');
      await runMcpServer({ baseUrl, apiKey });
    });

  await program.parseAsync(argv);
}
