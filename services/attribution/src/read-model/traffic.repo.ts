// Writes traffic_sessions rows for a scope of sessions (traffic.sql.ts): one INSERT ... SELECT.
import type { ClickHouseStore } from '@sightline/kit';
import { insertTrafficSql, sessionScopeParams, type SessionScope } from './traffic.sql';
import { versionText } from './version';

export class TrafficRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  async compute(workspaceId: string, scope: SessionScope, version: number): Promise<void> {
    if ((scope.by === 'sessions' || scope.by === 'identities') && scope.identityIds.length === 0) return;
    await this.ch.command(insertTrafficSql(scope), { workspace: workspaceId, computed_at: versionText(version), ...sessionScopeParams(scope) });
  }
}
