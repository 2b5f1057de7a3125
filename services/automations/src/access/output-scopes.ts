// What an alert's output may show, and to whom. An alert's runs contain what it gathered or was
// triggered by: /metrics figures, a funnel's conversion, the contents of contact and deal events.
// Those are visible only to keys holding the scopes that would read them directly, so a key with
// automations:* alone cannot read analytics through an alert:
// - writing a spec that would read them (POST, PATCH) and running an alert (POST /run, which sends
//   them to its recipients) need the scopes: 403 insufficient-scope naming the missing one;
// - reading an alert (GET /automations, GET /automations/{id}) without them answers it with its
//   figures redacted (state.last_value, runs' subject and compose_note, deliveries' error): null,
//   and `redacted` naming the missing scopes and the fields.
// Personal fields of events (email, phone, name) are shown as contacts shows them: unmasked only
// when the spec was written by a key with pii:read; otherwise masked in the messages (pii:read is
// then not among the output's scopes).
import { maskEmail, maskName, maskPhone, PII_SCOPE, ProblemError, type SqlExecutor } from '@sightline/kit';
import type { AlertRow } from '../alerts/alerts.repo';
import type { ComposeEvent } from '../compose/compose';
import type { AutomationSpec } from '../spec/spec';

/** The scopes an output can need, in the order they are checked and named. */
export const OUTPUT_SCOPES = ['analytics:read', 'funnels:read', 'conversions:read', 'deals:read', PII_SCOPE] as const;
export type OutputScope = (typeof OUTPUT_SCOPES)[number];

/** What each scope lets an alert's messages show. */
const WHAT: Record<OutputScope, string> = {
  'analytics:read': 'gathers /metrics figures',
  'funnels:read': "gathers a funnel's conversion",
  'conversions:read': 'sends the contents of contact events (conversions, stages, milestones)',
  'deals:read': 'sends the contents of deal events',
  'pii:read': "sends contacts' email, phone and name unmasked (its spec was written by a key with pii:read)",
};

const DEAL_EVENTS: readonly string[] = ['deal.created', 'deal.stage_changed'];

/** The scopes that would read, directly, what a spec's messages show (pii:read aside). */
export function specScopes(spec: AutomationSpec): OutputScope[] {
  const needed = new Set<OutputScope>();
  for (const query of Object.values(spec.gather ?? {})) needed.add(query.funnel !== undefined ? 'funnels:read' : 'analytics:read');
  if (spec.trigger.kind === 'event') for (const type of spec.trigger.events) needed.add(DEAL_EVENTS.includes(type) ? 'deals:read' : 'conversions:read');
  return OUTPUT_SCOPES.filter((s) => needed.has(s));
}

/** The scopes a spec written by a key with `writerScopes` makes its output need: its own, and pii:read when events are shown unmasked. */
export function outputScopesFor(spec: AutomationSpec, writerScopes: readonly string[]): OutputScope[] {
  const unmasked = spec.trigger.kind === 'event' && writerScopes.includes(PII_SCOPE);
  return [...specScopes(spec), ...(unmasked ? (['pii:read'] as const) : [])];
}

/** An alert's output scopes; alerts stored before they were recorded composed events unmasked. */
export function outputScopesOf(alert: Pick<AlertRow, 'spec'> & { output_scopes?: string[] | null }): string[] {
  return alert.output_scopes ?? outputScopesFor(alert.spec, [PII_SCOPE]);
}

export function missingScopes(needed: readonly string[], held: readonly string[]): string[] {
  return needed.filter((s) => !held.includes(s));
}

/** Refuses a key lacking one of `needed`, naming the first it lacks (as the gateway names an operation's scope). */
export function requireScopes(held: readonly string[], needed: readonly string[], action: string): void {
  const missing = missingScopes(needed, held)[0];
  if (missing === undefined) return;
  const what = WHAT[missing as OutputScope] ?? 'needs it';
  throw new ProblemError('insufficient-scope', {
    detail: `This key lacks the scope "${missing}". ${action} an alert that ${what} needs it: the messages show what that scope reads.`,
    remediation: `Use a key that has the "${missing}" scope (\`sightline keys create --scopes ${missing},...\`), or leave out of the spec what needs it.`,
    extra: { missing_scope: missing },
  });
}

/** Records the output scopes of an alert whose spec was just written (in the writing transaction). */
export async function saveOutputScopes(tx: SqlExecutor, alertId: string, scopes: readonly string[]): Promise<void> {
  await tx.query('UPDATE automations SET output_scopes = $2::text[] WHERE id = $1', [alertId, [...scopes]]);
}

const maskIn = (payload: Record<string, unknown>, field: string, mask: (v: string) => string): void => {
  const v = payload[field];
  if (typeof v === 'string') payload[field] = mask(v);
};

/** An event as the alert's messages may show it: personal fields masked unless its output carries pii:read. */
export function shownEvent(alert: Parameters<typeof outputScopesOf>[0], event: ComposeEvent): ComposeEvent {
  if (outputScopesOf(alert).includes(PII_SCOPE) || event.payload === null || typeof event.payload !== 'object') return event;
  const payload = { ...(event.payload as Record<string, unknown>) };
  maskIn(payload, 'email', maskEmail);
  maskIn(payload, 'phone', maskPhone);
  // A deal's name is the deal's, not a person's.
  if (!DEAL_EVENTS.includes(event.type)) maskIn(payload, 'name', maskName);
  if (Array.isArray(payload['contact_emails'])) payload['contact_emails'] = payload['contact_emails'].map((e) => (typeof e === 'string' ? maskEmail(e) : e));
  return { ...event, payload };
}
