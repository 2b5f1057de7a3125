// CRM memberships (who is on a company or a deal), as crm-sync last listed them, and the step
// that turns a listed member into an identity id. One row per sync; reads take the newest list
// per subject with argMax, so no answer depends on ClickHouse having merged the parts.
import type { ClickHouseStore } from '@sightline/kit';
import type { CrmMembersSyncedV1 } from '@sightline/proto-schemas';
import { isoFromClickHouse } from '../clickhouse-time';

export type CrmSubject = CrmMembersSyncedV1['subject'];

/** A listed member, normalised: '' for an absent key, email lower-cased and trimmed. */
export interface CrmMember {
  email: string;
  conversion_id: string;
  identity_id: string;
}

export interface CrmMembership {
  name: string | null;
  members: CrmMember[];
  synced_at: string;
}

/** How a member was tied to an identity: the key it carried, or nothing found. */
export type ResolvedVia = 'identity_id' | 'conversion_id' | 'email';

export interface ResolvedMember {
  member: CrmMember;
  identityId: string | null;
  via: ResolvedVia | null;
  /** The member's email, else the email of the contact it was resolved through ('' when none). */
  email: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Normalised members, each distinct member once, in the order first listed. */
export function normaliseMembers(members: CrmMembersSyncedV1['members']): CrmMember[] {
  const seen = new Map<string, CrmMember>();
  for (const m of members) {
    const member: CrmMember = {
      email: (m.email ?? '').trim().toLowerCase(),
      conversion_id: (m.conversion_id ?? '').trim().toLowerCase(),
      identity_id: (m.identity_id ?? '').trim(),
    };
    const key = `${member.email}\u0000${member.conversion_id}\u0000${member.identity_id}`;
    if (!seen.has(key)) seen.set(key, member);
  }
  return [...seen.values()];
}

export class CrmMembersRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  /** Stores each sync as it came; which list is in force is decided at read time. */
  async insertMany(dedupToken: string, syncs: readonly CrmMembersSyncedV1[]): Promise<void> {
    if (syncs.length === 0) return;
    await this.ch.insert(
      'crm_members',
      syncs.map((s) => ({
        website_id: s.website_id,
        workspace_id: s.workspace_id,
        subject: s.subject,
        subject_id: s.id,
        name: s.name ?? null,
        members: normaliseMembers(s.members),
        synced_at: s.synced_at,
      })),
      { dedupToken },
    );
  }

  /** The member list in force (newest synced_at), or null when the subject was never synced. */
  async latest(websiteId: string, subject: CrmSubject, subjectId: string): Promise<CrmMembership | null> {
    const rows = await this.ch.query<{ name: string | null; members: [string, string, string][]; synced_at: string }>(
      `SELECT argMax(name, version) AS name,
              CAST(argMax(members, version) AS Array(Tuple(String, String, String))) AS members,
              toString(argMax(synced_at, version)) AS synced_at
         FROM crm_members
        WHERE website_id = {website:UUID} AND subject = {subject:String} AND subject_id = {id:String}
        GROUP BY subject_id`,
      { website: websiteId, subject, id: subjectId },
    );
    const row = rows[0];
    if (!row) return null;
    return {
      name: row.name,
      members: row.members.map(([email, conversionId, identityId]) => ({ email, conversion_id: conversionId, identity_id: identityId })),
      synced_at: isoFromClickHouse(row.synced_at),
    };
  }

  /**
   * Ties each member to an identity: the identity id it carries, else the identity of the contact
   * (conversion) it names, else that of the newest contact with its email (case-insensitive).
   * Contacts without an identity resolve nothing. One query for the whole list.
   */
  async resolve(websiteId: string, members: readonly CrmMember[]): Promise<ResolvedMember[]> {
    const open = members.filter((m) => m.identity_id === '');
    const conversionIds = [...new Set(open.map((m) => m.conversion_id).filter((id) => UUID.test(id)))];
    const emails = [...new Set(open.map((m) => m.email).filter((e) => e !== ''))];
    const found =
      conversionIds.length === 0 && emails.length === 0
        ? []
        : await this.ch.query<{ conversion_id: string; email: string; identity_id: string }>(
            `SELECT toString(conversion_id) AS conversion_id, lower(email) AS email, identity_id
               FROM conversions
              WHERE website_id = {website:UUID} AND identity_id != ''
                AND (toString(conversion_id) IN {ids:Array(String)} OR lower(email) IN {emails:Array(String)})
              ORDER BY occurred_at DESC, conversion_id DESC`,
            { website: websiteId, ids: conversionIds, emails },
          );
    const byConversion = new Map<string, { identity: string; email: string }>();
    const byEmail = new Map<string, string>();
    for (const f of found) {
      if (!byConversion.has(f.conversion_id)) byConversion.set(f.conversion_id, { identity: f.identity_id, email: f.email });
      if (f.email !== '' && !byEmail.has(f.email)) byEmail.set(f.email, f.identity_id);
    }
    return members.map((member): ResolvedMember => {
      if (member.identity_id !== '') return { member, identityId: member.identity_id, via: 'identity_id', email: member.email };
      const contact = byConversion.get(member.conversion_id);
      if (contact) return { member, identityId: contact.identity, via: 'conversion_id', email: member.email || contact.email };
      const byMail = member.email === '' ? undefined : byEmail.get(member.email);
      if (byMail) return { member, identityId: byMail, via: 'email', email: member.email };
      return { member, identityId: null, via: null, email: member.email };
    });
  }
}
