// The Slack workspace connected to each Sightline workspace. The bot token is sealed (kit sealing
// box, bound to the workspace id); reads that leave this file never include it.
import type { SealingBox, SqlExecutor } from '@sightline/kit';

export interface ChatConnectionView {
  workspace_id: string;
  provider: 'slack';
  team_id: string;
  team_name: string;
  rate_limited_until: string | null;
  created_at: string;
  updated_at: string;
}

interface Row {
  workspace_id: string;
  provider: 'slack';
  team_id: string;
  team_name: string;
  rate_limited_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const VIEW = 'workspace_id, provider, team_id, team_name, rate_limited_until, created_at, updated_at';
const toView = (r: Row): ChatConnectionView => ({
  workspace_id: r.workspace_id, provider: r.provider, team_id: r.team_id, team_name: r.team_name,
  rate_limited_until: r.rate_limited_until?.toISOString() ?? null, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

export type TokenBox = SealingBox<{ bot_token: string }>;

export class ChatConnections {
  constructor(private readonly db: SqlExecutor, private readonly box: TokenBox) {}

  /** Saves (or replaces) a workspace's connection; true when new. */
  async save(input: { workspaceId: string; teamId: string; teamName: string; token: string; now: Date }): Promise<boolean> {
    const sealed = this.box.seal(input.workspaceId, { bot_token: input.token });
    const result = await this.db.query<{ inserted: boolean }>(
      `INSERT INTO chat_connections (workspace_id, provider, team_id, team_name, bot_token, created_at, updated_at) VALUES ($1, 'slack', $2, $3, $4, $5, $5)
       ON CONFLICT (workspace_id) DO UPDATE SET team_id = EXCLUDED.team_id, team_name = EXCLUDED.team_name, bot_token = EXCLUDED.bot_token,
         rate_limited_until = NULL, updated_at = EXCLUDED.updated_at
       RETURNING (xmax = 0) AS inserted`,
      [input.workspaceId, input.teamId, input.teamName, sealed, input.now],
    );
    return result.rows[0]?.inserted === true;
  }

  async list(workspaceId?: string): Promise<ChatConnectionView[]> {
    const result = await this.db.query<Row>(`SELECT ${VIEW} FROM chat_connections WHERE ($1::text IS NULL OR workspace_id = $1) ORDER BY workspace_id`, [workspaceId ?? null]);
    return result.rows.map(toView);
  }

  async get(workspaceId: string): Promise<ChatConnectionView | null> {
    const row = (await this.db.query<Row>(`SELECT ${VIEW} FROM chat_connections WHERE workspace_id = $1`, [workspaceId])).rows[0];
    return row ? toView(row) : null;
  }

  async token(workspaceId: string): Promise<string | null> {
    const row = (await this.db.query<{ bot_token: Buffer }>('SELECT bot_token FROM chat_connections WHERE workspace_id = $1', [workspaceId])).rows[0];
    return row ? this.box.open(workspaceId, Buffer.from(row.bot_token)).bot_token : null;
  }

  async remove(workspaceId: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM chat_connections WHERE workspace_id = $1', [workspaceId])).rowCount > 0;
  }
}
