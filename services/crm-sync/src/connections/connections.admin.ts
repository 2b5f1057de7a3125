// Operator routes for CRM connections, on the admin port (under /admin, behind the admin token):
//   POST   /crm/connections            add (or re-add) a website's connection; 201 new, 200 replaced
//   GET    /crm/connections            list (?website_id=, ?workspace_id=)
//   GET    /crm/connections/:id        one connection's status
//   POST   /crm/connections/:id/sync   sync now (?full=true re-reads everything); 202
//   DELETE /crm/connections/:id        disconnect (credentials erased, mirrored records kept)
// No answer ever carries credentials: the views are built from columns that exclude them.
import type { Request, Router } from 'express';
import type { Logger } from 'pino';
import { adminRoute as route, ProblemError } from '@sightline/kit';
import type { ConnectionSettings, Connector, Credentials } from '../connectors/connector';
import type { SyncRunner } from '../sync/sync-runner';
import { ConnectionsRepo, type ConnectionView } from './connections.repo';
import type { CredentialsBox } from './credentials';

export interface ConnectionsAdminDeps {
  repo: ConnectionsRepo;
  runner: SyncRunner;
  box: CredentialsBox;
  providers: readonly string[];
  connectorFor: (provider: string) => Connector | null;
  logger: Logger;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_CREDENTIAL_FIELDS = 10;
const MAX_CREDENTIAL_CHARS = 4096;
const MAX_SETTINGS_CHARS = 32_768;

export function connectionsAdminRoutes(router: Router, deps: ConnectionsAdminDeps): void {
  const { repo, runner } = deps;

  router.post('/crm/connections', route(async (req) => {
    const input = parseAdd(req.body, deps);
    const id = ConnectionsRepo.idOf(input.websiteId, input.provider);
    const created = await repo.save({
      id, workspaceId: input.workspaceId, websiteId: input.websiteId, provider: input.provider, sealed: deps.box.seal(id, input.credentials), settings: input.settings,
    });
    const view = await mustGet(repo, id);
    deps.logger.info({ connection: id, provider: input.provider, created }, 'crm connection saved');
    return { status: created ? 201 : 200, body: view };
  }));

  router.get('/crm/connections', route(async (req) => {
    const websiteId = optionalUuid(req.query['website_id'], 'website_id');
    const workspaceId = optionalUuid(req.query['workspace_id'], 'workspace_id');
    const data = await repo.list({ ...(websiteId ? { websiteId } : {}), ...(workspaceId ? { workspaceId } : {}) });
    return { status: 200, body: { data } };
  }));

  router.get('/crm/connections/:id', route(async (req) => ({ status: 200, body: await mustGet(repo, idParam(req)) })));

  router.post('/crm/connections/:id/sync', route(async (req) => {
    const id = idParam(req);
    const full = req.query['full'] === 'true' || req.query['full'] === '1';
    const view = await mustGet(repo, id);
    if (view.status !== 'active') {
      throw new ProblemError('conflict', { detail: `Connection ${id} is disconnected.`, remediation: 'Add it again with `sightline connections add`.' });
    }
    const start = await runner.begin(id, { full });
    if (start.status === 'busy') {
      throw new ProblemError('conflict', {
        detail: `A sync of connection ${id} is already running.`,
        remediation: `Wait for it to finish: \`sightline connections status ${id}\`.`,
      });
    }
    if (start.status === 'inactive') throw notFound(id);
    // The sync runs on; its end is visible in the connection's status.
    void start.done;
    return { status: 202, body: { ...(await mustGet(repo, id)), full } };
  }));

  router.delete('/crm/connections/:id', route(async (req) => {
    const id = idParam(req);
    await mustGet(repo, id);
    await runner.interrupt(id);
    await repo.disconnect(id);
    deps.logger.info({ connection: id }, 'crm connection disconnected');
    return { status: 200, body: await mustGet(repo, id) };
  }));
}

interface AddInput {
  websiteId: string;
  workspaceId: string;
  provider: string;
  credentials: Credentials;
  settings: ConnectionSettings;
}

function parseAdd(body: unknown, deps: ConnectionsAdminDeps): AddInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The body must be a JSON object: {website_id, workspace_id, provider, credentials, settings?}.');
  }
  const b = body as Record<string, unknown>;
  const websiteId = requiredUuid(b['website_id'], 'website_id');
  const workspaceId = requiredUuid(b['workspace_id'], 'workspace_id');
  const provider = b['provider'];
  if (typeof provider !== 'string' || !deps.providers.includes(provider)) {
    throw new ProblemError('invalid-request', {
      detail: `Unknown provider ${JSON.stringify(provider ?? null)}.`,
      remediation: 'Use one of the allowed providers.',
      allowed: deps.providers,
    });
  }
  const credentials = parseCredentials(b['credentials']);
  const connector = deps.connectorFor(provider);
  const problem = connector?.validateCredentials?.(credentials) ?? null;
  if (problem) throw invalid(problem);
  const settings = parseSettings(b['settings']);
  const settingsProblem = connector?.validateSettings?.(settings) ?? (connector?.validateSettings || Object.keys(settings).length === 0 ? null : `${provider} takes no settings.`);
  if (settingsProblem) throw invalid(settingsProblem);
  return { websiteId, workspaceId, provider, credentials, settings };
}

/** Settings are plain JSON the connector checks; bounded so a row stays small. */
function parseSettings(value: unknown): ConnectionSettings {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('settings must be a JSON object (the provider\'s mapping and limits).');
  if (JSON.stringify(value).length > MAX_SETTINGS_CHARS) throw invalid(`settings must be at most ${MAX_SETTINGS_CHARS} characters of JSON.`);
  return value as ConnectionSettings;
}

function parseCredentials(value: unknown): Credentials {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('credentials must be an object of strings, e.g. {"access_token": "..."}.');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0 || entries.length > MAX_CREDENTIAL_FIELDS) throw invalid(`credentials must have 1 to ${MAX_CREDENTIAL_FIELDS} fields.`);
  const credentials: Credentials = {};
  for (const [key, v] of entries) {
    // The message names the field, never its value.
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_CREDENTIAL_CHARS) throw invalid(`credentials.${key} must be a non-empty string of at most ${MAX_CREDENTIAL_CHARS} characters.`);
    credentials[key] = v;
  }
  return credentials;
}

function requiredUuid(value: unknown, name: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw invalid(`${name} must be a UUID.`);
  return value.toLowerCase();
}

function optionalUuid(value: unknown, name: string): string | undefined {
  return value === undefined ? undefined : requiredUuid(value, name);
}

function idParam(req: Request): string {
  const id = String(req.params['id']);
  if (!UUID.test(id)) throw invalid('The connection id must be a UUID (see `sightline connections list`).');
  return id.toLowerCase();
}

async function mustGet(repo: ConnectionsRepo, id: string): Promise<ConnectionView> {
  const view = await repo.get(id);
  if (!view) throw notFound(id);
  return view;
}

function notFound(id: string): ProblemError {
  return new ProblemError('not-found', { detail: `No CRM connection ${id}.`, remediation: 'List them with `sightline connections list`.' });
}

function invalid(detail: string): ProblemError {
  return new ProblemError('invalid-request', { detail, remediation: 'Correct the request and send it again.' });
}
