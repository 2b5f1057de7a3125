// The API v2 routes' handlers: paged, sorted lists (with updated_since/updated_until and the
// deal filters), person search, and PATCH of a person's custom fields or a deal.
import { dealJson, personJson } from './json';
import { PipedriveLimits } from './limits';
import { customFieldsOf, decodeListCursor, encodeListCursor, matchId, parseLimit, rfc3339 } from './params';
import { HttpError, type DealPatch, type StoredDeal } from './types';

export class PipedriveV2Routes extends PipedriveLimits {
  protected dealsMatching(q: Record<string, string>): StoredDeal[] {
    const statuses = q['status'] ? q['status'].split(',') : null;
    return [...this.deals.values()].filter((d) => !d.is_archived
      && (statuses ? statuses.includes(d.status) : d.status !== 'deleted')
      && matchId(q['person_id'], d.person_id) && matchId(q['org_id'], d.org_id)
      && matchId(q['pipeline_id'], d.pipeline_id) && matchId(q['stage_id'], d.stage_id));
  }

  protected filterUpdated<T extends { update: number }>(items: T[], q: Record<string, string>): T[] {
    const since = q['updated_since'] === undefined ? null : rfc3339(q['updated_since'], 'updated_since');
    const until = q['updated_until'] === undefined ? null : rfc3339(q['updated_until'], 'updated_until');
    // Pipedrive keeps update_time to the second.
    const second = (ms: number): number => Math.floor(ms / 1000) * 1000;
    return items.filter((i) => (since === null || second(i.update) >= since) && (until === null || second(i.update) < until));
  }

  /** One page of a v2 list: sorted, then cut after the cursor's position. */
  protected list<T extends { id: number; add: number; update: number }>(items: T[], q: Record<string, string>, json: (item: T) => unknown, sortable: string[]): unknown {
    const sortBy = q['sort_by'] ?? 'id';
    if (!sortable.includes(sortBy)) throw new HttpError(400, `Invalid sort_by: ${sortBy}. Supported fields: ${sortable.join(', ')}`);
    const direction = q['sort_direction'] ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') throw new HttpError(400, 'Invalid sort_direction: use asc or desc');
    const limit = parseLimit(q['limit']);
    const key = (item: T): number => (sortBy === 'update_time' ? Math.floor(item.update / 1000) : sortBy === 'add_time' ? Math.floor(item.add / 1000) : sortBy === 'order_nr' ? (item as unknown as { order_nr: number }).order_nr : item.id);
    const sign = direction === 'asc' ? 1 : -1;
    const sorted = [...items].sort((a, b) => sign * (key(a) - key(b) || a.id - b.id));
    let start = 0;
    if (q['cursor'] !== undefined) {
      const c = decodeListCursor(q['cursor']);
      if (c.sortBy !== sortBy || c.direction !== direction) throw new HttpError(400, 'The cursor belongs to a different sort order');
      start = sorted.findIndex((i) => sign * (key(i) - c.key || i.id - c.id) > 0);
      if (start < 0) start = sorted.length;
    }
    const page = sorted.slice(start, start + limit);
    const last = page[page.length - 1];
    const more = start + limit < sorted.length && last !== undefined;
    return { success: true, data: page.map(json), additional_data: { next_cursor: more ? encodeListCursor({ sortBy, direction, key: key(last!), id: last!.id }) : null } };
  }

  protected searchPersons(q: Record<string, string>): unknown {
    const term = (q['term'] ?? '').trim().toLowerCase();
    const exact = q['exact_match'] === 'true';
    if (term.length < (exact ? 1 : 2)) throw new HttpError(400, 'Search term must be at least 2 characters long (1 with exact_match)');
    const fields = q['fields'] ? q['fields'].split(',') : ['name', 'email', 'phone', 'notes', 'custom_fields'];
    const hit = (value: string): boolean => (exact ? value.toLowerCase() === term : value.toLowerCase().includes(term));
    const found = [...this.persons.values()].filter((p) => !p.is_deleted
      && ((fields.includes('email') && p.emails.some((e) => hit(e.value))) || (fields.includes('name') && hit(p.name))));
    const limit = parseLimit(q['limit']);
    const page = found.slice(0, limit);
    return {
      success: true,
      data: {
        items: page.map((p) => ({
          result_score: exact ? 1 : 0.5,
          item: {
            id: p.id, type: 'person', name: p.name, phones: [], emails: p.emails.map((e) => e.value), visible_to: 3, owner: { id: p.owner_id },
            organization: p.org_id === null ? null : { id: p.org_id, name: this.organizations.get(p.org_id)?.name ?? null, address: null },
            custom_fields: [], notes: [],
          },
        })),
      },
      additional_data: { next_cursor: null },
    };
  }

  protected patchPerson(id: number, body: unknown): unknown {
    const p = this.visiblePerson(id);
    const fields = customFieldsOf(body, this.personFields);
    Object.assign(p.custom_fields, fields);
    p.update = this.now();
    return { success: true, data: personJson(p) };
  }

  protected patchDeal(id: number, body: unknown): unknown {
    this.visibleDeal(id);
    const fields = customFieldsOf(body, this.dealFields);
    const rest = Object.fromEntries(Object.entries(body as Record<string, unknown>).filter(([k]) => k !== 'custom_fields')) as DealPatch;
    this.updateDeal(id, { ...rest, custom_fields: fields }, 'api');
    return { success: true, data: dealJson(this.deals.get(id)!) };
  }
}
