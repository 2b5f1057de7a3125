// The automations table: alerts with their spec, the website and workspace they were created for,
// and the scheduler's state (next cron time, whether a threshold is firing).
import type { SqlExecutor } from '@sightline/kit';
import type { WebsiteSnapshot, WorkspaceSnapshot } from '../gather/gather';
import type { AutomationSpec } from '../spec/spec';

export interface AlertRow {
  id: string;
  workspace_id: string;
  website_id: string;
  name: string;
  template_id: string | null;
  status: 'active' | 'paused';
  /** Why the service paused it (a deleted funnel); null when a person set the status. */
  status_reason: string | null;
  spec: AutomationSpec;
  kind: 'event' | 'schedule' | 'threshold';
  workspace: WorkspaceSnapshot;
  website: WebsiteSnapshot;
  timezone: string;
  currency: string;
  next_run_at: Date | null;
  firing: boolean;
  last_evaluated_at: Date | null;
  last_value: number | null;
  last_event: { type: string; payload: unknown; occurred_at: string } | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  /** The scopes a key needs to see what its runs contain (access/output-scopes.ts); null on alerts stored before they were recorded. */
  output_scopes: string[] | null;
}

const COLUMNS = `id::text AS id, workspace_id, website_id, name, template_id, status, status_reason, spec, kind, workspace, website, timezone, currency,
  next_run_at, firing, last_evaluated_at, last_value, last_event, created_by, created_at, updated_at, output_scopes`;

export interface NewAlert {
  id: string;
  workspaceId: string;
  websiteId: string;
  name: string;
  templateId: string | null;
  spec: AutomationSpec;
  workspace: WorkspaceSnapshot;
  website: WebsiteSnapshot;
  nextRunAt: Date | null;
  createdBy: string;
  now: Date;
}

const eventTypesOf = (spec: AutomationSpec): string[] => (spec.trigger.kind === 'event' ? spec.trigger.events : []);

export async function insertAlert(tx: SqlExecutor, a: NewAlert): Promise<AlertRow> {
  const result = await tx.query<AlertRow>(
    `INSERT INTO automations (id, workspace_id, website_id, name, template_id, status, spec, kind, event_types, workspace, website, timezone, currency,
       next_run_at, created_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'active', $6::json, $7, $8::text[], $9::jsonb, $10::jsonb, $11, $12, $13, $14, $15, $15)
     RETURNING ${COLUMNS}`,
    [a.id, a.workspaceId, a.websiteId, a.name, a.templateId, JSON.stringify(a.spec), a.spec.trigger.kind, eventTypesOf(a.spec),
      JSON.stringify(a.workspace), JSON.stringify(a.website), a.website.timezone, a.website.currency, a.nextRunAt, a.createdBy, a.now],
  );
  return result.rows[0] as AlertRow;
}

export async function countForWebsite(db: SqlExecutor, websiteId: string): Promise<number> {
  const result = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM automations WHERE website_id = $1', [websiteId]);
  return result.rows[0]?.n ?? 0;
}

export async function listAlerts(db: SqlExecutor, websiteId: string): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(`SELECT ${COLUMNS} FROM automations WHERE website_id = $1 ORDER BY created_at, id`, [websiteId]);
  return result.rows;
}

export async function getAlert(db: SqlExecutor, id: string, forUpdate = false): Promise<AlertRow | null> {
  const result = await db.query<AlertRow>(`SELECT ${COLUMNS} FROM automations WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return result.rows[0] ?? null;
}

export interface AlertChange {
  name?: string;
  spec?: AutomationSpec;
  status?: 'active' | 'paused';
  nextRunAt?: Date | null;
  /** A threshold's firing state starts from normal (the trigger kind changed); other edits keep it. */
  resetState?: boolean;
  website?: WebsiteSnapshot;
  workspace?: WorkspaceSnapshot;
}

export async function updateAlert(tx: SqlExecutor, id: string, change: AlertChange, now: Date): Promise<AlertRow> {
  const result = await tx.query<AlertRow>(
    `UPDATE automations SET
       name = COALESCE($2, name),
       spec = COALESCE($3::json, spec),
       kind = COALESCE($4, kind),
       event_types = COALESCE($5::text[], event_types),
       status = COALESCE($6, status),
       -- A status set through the API replaces the service's reason for a pause.
       status_reason = CASE WHEN $6::text IS NULL THEN status_reason ELSE NULL END,
       next_run_at = CASE WHEN $7 THEN $8 ELSE next_run_at END,
       firing = CASE WHEN $9 THEN false ELSE firing END,
       last_evaluated_at = CASE WHEN $9 THEN NULL ELSE last_evaluated_at END,
       last_value = CASE WHEN $9 THEN NULL ELSE last_value END,
       website = COALESCE($10::jsonb, website),
       workspace = COALESCE($11::jsonb, workspace),
       updated_at = $12
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [
      id, change.name ?? null, change.spec ? JSON.stringify(change.spec) : null, change.spec?.trigger.kind ?? null,
      change.spec ? eventTypesOf(change.spec) : null, change.status ?? null, change.nextRunAt !== undefined, change.nextRunAt ?? null,
      change.resetState === true, change.website ? JSON.stringify(change.website) : null, change.workspace ? JSON.stringify(change.workspace) : null, now,
    ],
  );
  return result.rows[0] as AlertRow;
}

export async function deleteAlert(tx: SqlExecutor, id: string): Promise<void> {
  await tx.query('DELETE FROM automations WHERE id = $1', [id]);
}

/** Alerts of a website whose gather reads the funnel (any status). */
export async function alertsGatheringFunnel(db: SqlExecutor, websiteId: string, funnelId: string): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${COLUMNS} FROM automations
      WHERE website_id = $1 AND EXISTS (SELECT 1 FROM json_each(CASE WHEN json_typeof(spec->'gather') = 'object' THEN spec->'gather' ELSE '{}'::json END) g WHERE lower(g.value->>'funnel') = lower($2))
      ORDER BY id`,
    [websiteId, funnelId],
  );
  return result.rows;
}

/**
 * Pauses an alert with the service's reason (an alert a person had paused gets the reason too, so
 * resuming it is not a surprise). `was` is its status before; null when there is no such alert.
 */
export async function pauseWithReason(tx: SqlExecutor, id: string, reason: string, now: Date): Promise<{ alert: AlertRow; was: AlertRow['status'] } | null> {
  const before = await getAlert(tx, id, true);
  if (!before) return null;
  const result = await tx.query<AlertRow>(
    `UPDATE automations SET status = 'paused', status_reason = $2, updated_at = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, reason, now],
  );
  return { alert: result.rows[0] as AlertRow, was: before.status };
}

/** Active event alerts of a website listening to `type`. */
export async function eventAlerts(db: SqlExecutor, websiteId: string, type: string): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${COLUMNS} FROM automations WHERE website_id = $1 AND status = 'active' AND kind = 'event' AND event_types @> ARRAY[$2]::text[] ORDER BY id`,
    [websiteId, type],
  );
  return result.rows;
}

/** Active schedule and threshold alerts whose next cron time has come. */
export async function dueAlerts(db: SqlExecutor, now: Date, limit: number): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${COLUMNS} FROM automations WHERE status = 'active' AND next_run_at IS NOT NULL AND next_run_at <= $1 ORDER BY next_run_at, id LIMIT $2`,
    [now, limit],
  );
  return result.rows;
}

/**
 * Moves an alert past the slot it ran for, only if nobody did already (the claim of a cron time:
 * across replicas, the first transaction to commit it wins). Returns whether this caller won.
 */
export async function advanceSlot(tx: SqlExecutor, id: string, slot: Date, next: Date | null, state: { firing?: boolean; value?: number | null; evaluatedAt?: Date } = {}): Promise<boolean> {
  const result = await tx.query(
    `UPDATE automations SET next_run_at = $3,
       firing = COALESCE($4, firing),
       last_value = CASE WHEN $6::timestamptz IS NULL THEN last_value ELSE $5 END,
       last_evaluated_at = COALESCE($6, last_evaluated_at)
     WHERE id = $1 AND status = 'active' AND next_run_at = $2`,
    [id, slot, next, state.firing ?? null, state.value ?? null, state.evaluatedAt ?? null],
  );
  return result.rowCount > 0;
}

export async function rememberEvent(db: SqlExecutor, ids: string[], event: { type: string; payload: unknown; occurred_at: string }): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE automations SET last_event = $2::jsonb WHERE id = ANY($1::uuid[])', [ids, JSON.stringify(event)]);
}

/** Event alerts with hourly or daily pacing (the digest flush looks at their waiting events). */
export async function digestAlerts(db: SqlExecutor): Promise<AlertRow[]> {
  const result = await db.query<AlertRow>(
    `SELECT ${COLUMNS} FROM automations a WHERE a.kind = 'event' AND EXISTS (SELECT 1 FROM digest_events d WHERE d.automation_id = a.id)`,
  );
  return result.rows;
}

export interface QuietSlot {
  id: string;
  slot: Date;
  next: Date | null;
  firing: boolean;
  value: number | null;
  evaluatedAt: Date;
}

/**
 * advanceSlot for many alerts that send nothing this time, in one statement: the evaluations of a
 * tick where nothing changed cost one round trip, not one transaction each. An alert whose slot
 * another replica took is simply not updated.
 */
export async function advanceQuietSlots(db: SqlExecutor, slots: readonly QuietSlot[]): Promise<number> {
  if (slots.length === 0) return 0;
  const result = await db.query(
    `UPDATE automations a SET next_run_at = v.next, firing = v.firing, last_value = v.value, last_evaluated_at = v.at
     FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::boolean[], $5::double precision[], $6::timestamptz[]) AS v(id, slot, next, firing, value, at)
     WHERE a.id = v.id AND a.status = 'active' AND a.next_run_at = v.slot`,
    [slots.map((s) => s.id), slots.map((s) => s.slot), slots.map((s) => s.next), slots.map((s) => s.firing), slots.map((s) => s.value), slots.map((s) => s.evaluatedAt)],
  );
  return result.rowCount;
}
