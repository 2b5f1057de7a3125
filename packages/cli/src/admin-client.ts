// Talks to a running instance's admin API. The CLI never opens the stores itself: PGlite and chDB
// belong to the one process that runs them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface AdminConnection {
  url: string;
  token: string;
}

export function adminConnection(options: { adminUrl?: string; adminToken?: string }, env: NodeJS.ProcessEnv): AdminConnection {
  const url = options.adminUrl ?? env['SIGHTLINE_ADMIN_URL'] ?? `http://localhost:${env['SIGHTLINE_ADMIN_PORT'] ?? '9090'}`;
  let token = options.adminToken ?? env['SIGHTLINE_ADMIN_TOKEN'];
  if (!token) {
    const file = join(env['SIGHTLINE_DATA_DIR'] ?? './data', 'admin-token');
    if (existsSync(file)) token = readFileSync(file, 'utf8').trim();
  }
  if (!token) {
    throw new Error('no admin token: pass --admin-token, set SIGHTLINE_ADMIN_TOKEN, or run from the directory whose data/admin-token the embedded instance wrote');
  }
  return { url: url.replace(/\/$/, ''), token };
}

export async function adminRequest<T>(conn: AdminConnection, method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${conn.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${conn.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new Error(`cannot reach the admin API at ${conn.url} (${(error as Error).message}); is \`sightline start\` running?`);
  }
  const text = await response.text();
  const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!response.ok) {
    const detail = parsed['detail'] ?? parsed['error'] ?? text;
    const remediation = parsed['remediation'] ? `\n  ${String(parsed['remediation'])}` : '';
    const allowed = Array.isArray(parsed['allowed']) ? `\n  allowed: ${(parsed['allowed'] as string[]).join(', ')}` : '';
    throw new Error(`admin API ${response.status}: ${String(detail)}${remediation}${allowed}`);
  }
  return parsed as T;
}
