// The operator API on the admin port (behind the admin token, mounted at /admin by the runner).
// The `sightline` CLI talks to this, because embedded stores belong to the running process.
import type { Router } from 'express';
import { adminRoute as route, ProblemError } from '@sightline/kit';
import type { AccountsAdmin } from './accounts-admin';
import type { AccountsRepo } from './accounts.repo';
import type { Authenticator } from './auth';
import type { QuotaLedger } from './quota-ledger';

export function mountAdminRoutes(
  router: Router,
  deps: { admin: AccountsAdmin; repo: AccountsRepo; auth: Authenticator; ledger: QuotaLedger },
): void {
  const { admin, repo } = deps;
  // Each workspace with its requests this month (UTC) as stored durably: the KV counter's figure at
  // the last flush (at most ~2 s behind), `as_of` when it was written (null: none counted yet).
  router.get('/workspaces', route(async () => {
    const month = new Date().toISOString().slice(0, 7);
    const [workspaces, usage] = await Promise.all([repo.listWorkspaces(), deps.ledger.usage(month)]);
    const data = workspaces.map((w) => {
      const stored = usage.get(w.id);
      return { ...w, quota_usage: { month, requests: stored?.used ?? 0, as_of: stored?.updatedAt ?? null } };
    });
    return { status: 200, body: { data } };
  }));
  router.post('/workspaces', route(async (req) => ({ status: 201, body: await admin.createWorkspace(req.body ?? {}) })));
  router.get('/workspaces/:id/websites', route(async (req) => ({ status: 200, body: { data: await repo.listWebsites(String(req.params['id'])) } })));
  router.post('/workspaces/:id/websites', route(async (req) => ({ status: 201, body: await admin.addWebsite(String(req.params['id']), req.body ?? {}) })));
  router.get('/websites/:domain', route(async (req) => {
    const website = await repo.findWebsiteByDomain(String(req.params['domain']).toLowerCase());
    if (!website) throw new ProblemError('not-found', { detail: `No website "${String(req.params['domain'])}".`, remediation: 'Add it with `sightline websites add`.' });
    return { status: 200, body: website };
  }));
  router.get('/keys', route(async (req) => ({ status: 200, body: { data: await repo.listKeys(typeof req.query['workspace_id'] === 'string' ? req.query['workspace_id'] : undefined) } })));
  router.post('/keys', route(async (req) => ({ status: 201, body: await admin.createKey(req.body ?? {}) })));
  router.delete('/keys/:keyId', route(async (req) => {
    const keyId = String(req.params['keyId']);
    await admin.revokeKey(keyId);
    deps.auth.forget(keyId);
    return { status: 200, body: { key_id: keyId, revoked: true } };
  }));
}
