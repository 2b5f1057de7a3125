// The operator API (workspaces, websites, keys) of a running instance, as the e2e suites use it.
import type { RunningProcess } from '@sightline/kit';

export type AdminPost = (path: string, body: unknown) => Promise<Record<string, string>>;

/** POSTs JSON to `<adminUrl>/admin<path>` with the admin token and returns the JSON answer. */
export function adminClient(adminUrl: string, token: string): AdminPost {
  return async (path, body) => {
    const response = await fetch(`${adminUrl}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, string>;
  };
}

/** The operator API of an instance started in this process with `startModules`. */
export function adminOf(proc: RunningProcess): AdminPost {
  return adminClient(`http://127.0.0.1:${proc.adminPort}`, proc.settings.adminToken);
}
