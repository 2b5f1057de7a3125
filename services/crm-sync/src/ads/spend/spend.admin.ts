// Operator route (admin port, admin token): run one spend pull of an ad account now and answer how
// it ended (the same pull the schedule runs, under the same lease).
//   POST /admin/crm/ad-destinations/:website_id/:platform/pull   {window?: "cost" | "conversions"}
// 200 {data: {status: "pulled", window, rows, ...}} or {data: {status: "failed", error, next_pull_at}};
// 404 when the account is not connected (or the platform pulls no spend); 409 while another pull
// of the account runs (here or on another replica).
import { adminRoute, ProblemError, type ModuleInstance } from '@sightline/kit';
import type { PullOptions, SpendRunner } from './spend-runner';

type AdminRouter = Parameters<NonNullable<ModuleInstance['adminRoutes']>>[0];

export function spendAdminRoutes(router: AdminRouter, runner: SpendRunner): void {
  router.post('/crm/ad-destinations/:websiteId/:platform/pull', adminRoute(async (req) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const window = body['window'];
    if (window !== undefined && window !== 'cost' && window !== 'conversions') {
      throw new ProblemError('invalid-request', { detail: 'window must be "cost" or "conversions".', remediation: 'Leave it out to pull the window that is due.', allowed: ['cost', 'conversions'] });
    }
    const options: PullOptions = window === undefined ? {} : { window };
    const outcome = await runner.pull(String(req.params['websiteId']), String(req.params['platform']), options);
    if (outcome.status === 'not-found') {
      throw new ProblemError('not-found', { detail: 'No active ad account of that platform for the website.', remediation: 'Connect it with PUT /admin/crm/ad-destinations/:website_id/:platform (google_ads, meta_ads or linkedin_ads).' });
    }
    if (outcome.status === 'busy') {
      throw new ProblemError('conflict', { detail: 'A spend pull of this ad account is running.', remediation: 'Wait for it to finish (GET /admin/crm/ad-destinations shows its result), then pull again.' });
    }
    return { status: 200, body: { data: outcome } };
  }));
}
