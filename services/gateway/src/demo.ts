// First start of an embedded instance: create a demo workspace with two websites and a full-scope
// key, so `npm start` leaves something to curl. The key is also kept in <dataDir>/demo-key.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AccountsAdmin } from './accounts-admin';
import type { AccountsRepo } from './accounts.repo';

export const DEMO_WEBSITES = ['demo.sightline.test', 'shop.sightline.test'];

export async function ensureDemoWorkspace(deps: { repo: AccountsRepo; admin: AccountsAdmin; dataDir: string; publicUrl: string; logger: Logger }): Promise<string | null> {
  if ((await deps.repo.countWorkspaces()) > 0) return null;
  const workspace = await deps.admin.createWorkspace({ name: 'Demo', timezone: 'Europe/London', currency: 'GBP', plan: 'business' });
  await deps.admin.addWebsite(workspace.id, { domain: DEMO_WEBSITES[0] });
  await deps.admin.addWebsite(workspace.id, { domain: DEMO_WEBSITES[1], timezone: 'America/New_York', currency: 'USD' });
  const key = await deps.admin.createKey({ workspace_id: workspace.id, name: 'Demo key (all scopes)' });
  writeFileSync(join(deps.dataDir, 'demo-key'), `${key.key}\n`, { mode: 0o600 });
  deps.logger.info({ workspace_id: workspace.id, key_id: key.key_id }, 'demo workspace created');
  process.stdout.write(
    `\n  Sightline demo workspace created.\n  Base URL: ${deps.publicUrl}/v1\n  Demo key: ${key.key}\n` +
      `  Try:     curl -H "Authorization: Bearer ${key.key}" ${deps.publicUrl}/v1/me\n\n`,
  );
  return key.key;
}
