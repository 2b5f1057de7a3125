// The HubSpot pull, one page per call so every page can be committed with its resume cursor.
// Order: deal pipelines → companies → contacts → deals, so a deal's stage, company and contacts
// are in the mirror before the deal. A full pull pages the list endpoints (`after`); an
// incremental one pages the search endpoint by modification time (ascending, GTE since), and
// reads deal associations separately because search results carry none.
import type { CrmRecords } from '../../records';
import { ProviderError, type PullContext, type PullPage } from '../connector';
import { decodeCursor, encodeCursor, nextPhase, type FullCursor, type HubspotCursor, type IncrementalCursor } from './cursor';
import type { HubspotHttp } from './http';
import {
  linksFromObject,
  MODIFIED_PROPERTY,
  PROPERTIES,
  toCompany,
  toContact,
  toDeal,
  toPipeline,
  type DealLinks,
  type HubspotObject,
  type HubspotPipeline,
  type ObjectType,
} from './mapping';

export interface PullSettings {
  /** Objects per list or search page (HubSpot allows at most 100 on lists). */
  pageSize: number;
  /** Results one search may page through before HubSpot refuses (10,000). */
  searchResultCap: number;
}

interface Paged<T> {
  results: T[];
  paging?: { next?: { after: string; link?: string } };
}

interface Step {
  records: CrmRecords;
  next: HubspotCursor | null;
}

export async function* pullHubspot(http: HubspotHttp, ctx: PullContext, settings: PullSettings): AsyncGenerator<PullPage> {
  let cursor: HubspotCursor | null = ctx.cursor ? decodeCursor(ctx.cursor) : firstCursor(ctx.since);
  while (cursor) {
    const step: Step = await (cursor.mode === 'full' ? fullStep(http, cursor, settings) : incrementalStep(http, cursor, settings));
    yield { records: step.records, cursor: step.next ? encodeCursor(step.next) : null };
    cursor = step.next;
  }
}

function firstCursor(since: string | null): HubspotCursor {
  if (since === null) return { v: 1, mode: 'full', phase: 'pipelines', after: null };
  const at = new Date(since).toISOString();
  return { v: 1, mode: 'incremental', phase: 'pipelines', since: at, floor: at, after: null, seen: 0 };
}

/** The start of the phase after this one (the same mode), or null at the end. */
function advance(cursor: HubspotCursor): HubspotCursor | null {
  const phase = nextPhase(cursor.phase);
  if (phase === null) return null;
  return cursor.mode === 'full'
    ? { v: 1, mode: 'full', phase, after: null }
    : { v: 1, mode: 'incremental', phase, since: cursor.since, floor: cursor.since, after: null, seen: 0 };
}

/** Pipelines are few and unpaged: both modes read them whole, so stage changes always arrive. */
async function pipelinesStep(http: HubspotHttp, cursor: HubspotCursor): Promise<Step> {
  const answer = await http.get<{ results: HubspotPipeline[] }>('/crm/v3/pipelines/deals');
  const pipelines = answer.results.filter((p) => p.archived !== true).map(toPipeline);
  return { records: { pipelines }, next: advance(cursor) };
}

async function fullStep(http: HubspotHttp, cursor: FullCursor, settings: PullSettings): Promise<Step> {
  if (cursor.phase === 'pipelines') return pipelinesStep(http, cursor);
  const type: ObjectType = cursor.phase;
  const page = await http.get<Paged<HubspotObject>>(`/crm/v3/objects/${type}`, {
    limit: settings.pageSize,
    after: cursor.after ?? undefined,
    properties: PROPERTIES[type].join(','),
    archived: 'false',
    ...(type === 'deals' ? { associations: 'companies,contacts' } : {}),
  });
  const after = page.paging?.next?.after;
  return {
    records: toRecords(type, page.results, (o) => linksFromObject(o)),
    next: after ? { ...cursor, after } : advance(cursor),
  };
}

async function incrementalStep(http: HubspotHttp, cursor: IncrementalCursor, settings: PullSettings): Promise<Step> {
  if (cursor.phase === 'pipelines') return pipelinesStep(http, cursor);
  if (cursor.tie) return tieStep(http, cursor, cursor.tie, settings);
  const type: ObjectType = cursor.phase;
  const modified = MODIFIED_PROPERTY[type];
  const page = await search(http, type, settings, {
    filters: [{ propertyName: modified, operator: cursor.floorExclusive ? 'GT' : 'GTE', value: String(Date.parse(cursor.floor)) }],
    sort: modified,
    after: cursor.after,
  });
  const records = await recordsOf(http, type, page.results);
  const after = page.paging?.next?.after;
  if (!after) return { records, next: advance(cursor) };
  const seen = cursor.seen + page.results.length;
  if (seen + settings.pageSize <= settings.searchResultCap) return { records, next: { ...cursor, after, seen } };
  // Near the cap: search again from the last modification time seen. Records sharing that
  // instant come once more; applying them again changes nothing.
  const last = page.results[page.results.length - 1];
  const floor = last ? modifiedAt(last, modified) : null;
  if (floor === null) throw new ProviderError(`a HubSpot ${type} search result has no ${modified}`, null, false);
  const base = { v: 1 as const, mode: 'incremental' as const, phase: cursor.phase, since: cursor.since, after: null, seen: 0 };
  if (Date.parse(floor) > Date.parse(cursor.floor)) return { records, next: { ...base, floor } };
  // More records share this one instant than a search can page through: read them by id.
  return { records, next: { ...base, floor, tie: { afterId: null } } };
}

/** One page of the records modified exactly at `floor`, by ascending id; then on past that instant. */
async function tieStep(http: HubspotHttp, cursor: IncrementalCursor, tie: { afterId: string | null }, settings: PullSettings): Promise<Step> {
  const type = cursor.phase as ObjectType;
  const page = await search(http, type, settings, {
    filters: [
      { propertyName: MODIFIED_PROPERTY[type], operator: 'EQ', value: String(Date.parse(cursor.floor)) },
      ...(tie.afterId === null ? [] : [{ propertyName: 'hs_object_id', operator: 'GT', value: tie.afterId }]),
    ],
    sort: 'hs_object_id',
    after: null,
  });
  const records = await recordsOf(http, type, page.results);
  const lastId = page.results[page.results.length - 1]?.id;
  if (page.paging?.next?.after && lastId) return { records, next: { ...cursor, tie: { afterId: lastId } } };
  const { tie: _done, ...rest } = cursor;
  return { records, next: { ...rest, floorExclusive: true, after: null, seen: 0 } };
}

interface Filter {
  propertyName: string;
  operator: string;
  value: string;
}

function search(http: HubspotHttp, type: ObjectType, settings: PullSettings, q: { filters: Filter[]; sort: string; after: string | null }): Promise<Paged<HubspotObject>> {
  return http.post<Paged<HubspotObject> & { total?: number }>(`/crm/v3/objects/${type}/search`, {
    filterGroups: [{ filters: q.filters }],
    sorts: [{ propertyName: q.sort, direction: 'ASCENDING' }],
    properties: [...PROPERTIES[type]],
    limit: settings.pageSize,
    ...(q.after ? { after: q.after } : {}),
  });
}

/** Search results carry no associations: a deal page reads its deals' links separately. */
async function recordsOf(http: HubspotHttp, type: ObjectType, objects: HubspotObject[]): Promise<CrmRecords> {
  const links = type === 'deals' ? await dealLinks(http, objects.map((o) => o.id)) : new Map<string, DealLinks>();
  return toRecords(type, objects, (o) => links.get(o.id) ?? { companyId: null, contactIds: [] });
}

function modifiedAt(o: HubspotObject, property: string): string | null {
  const raw = o.properties[property] ?? o.updatedAt ?? null;
  if (raw === null) return null;
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function toRecords(type: ObjectType, objects: HubspotObject[], links: (o: HubspotObject) => DealLinks): CrmRecords {
  const live = objects.filter((o) => o.archived !== true);
  if (type === 'companies') return { companies: live.map(toCompany) };
  if (type === 'contacts') return { contacts: live.map(toContact) };
  return { deals: live.map((o) => toDeal(o, links(o))) };
}

interface AssociationBatch {
  status?: string;
  results: {
    from: { id: string };
    to: { toObjectId: string | number; associationTypes?: { category?: string; typeId?: number; label?: string | null }[] }[];
    paging?: { next?: { after: string } };
  }[];
}

/** HubSpot's primary deal → company association type. */
const PRIMARY_DEAL_COMPANY_TYPE_ID = 5;

/** Companies and contacts of these deals, through the v4 associations batch read (paged per deal). */
async function dealLinks(http: HubspotHttp, dealIds: string[]): Promise<Map<string, DealLinks>> {
  const links = new Map<string, DealLinks>(dealIds.map((id) => [id, { companyId: null, contactIds: [] }]));
  if (dealIds.length === 0) return links;
  for (const to of ['companies', 'contacts'] as const) {
    let inputs: { id: string; after?: string }[] = dealIds.map((id) => ({ id }));
    const companies = new Map<string, { id: string; primary: boolean }[]>();
    while (inputs.length > 0) {
      const batch = await http.post<AssociationBatch>(`/crm/v4/associations/deals/${to}/batch/read`, { inputs });
      inputs = [];
      for (const result of batch.results) {
        const link = links.get(result.from.id);
        if (!link) continue;
        for (const target of result.to) {
          const id = String(target.toObjectId);
          if (to === 'contacts') {
            if (!link.contactIds.includes(id)) link.contactIds.push(id);
          } else {
            const primary = (target.associationTypes ?? []).some((t) => t.label === 'Primary' || (t.category === 'HUBSPOT_DEFINED' && t.typeId === PRIMARY_DEAL_COMPANY_TYPE_ID));
            companies.set(result.from.id, [...(companies.get(result.from.id) ?? []), { id, primary }]);
          }
        }
        const after = result.paging?.next?.after;
        if (after) inputs.push({ id: result.from.id, after });
      }
    }
    for (const [dealId, candidates] of companies) {
      const link = links.get(dealId);
      if (link) link.companyId = (candidates.find((c) => c.primary) ?? candidates[0])?.id ?? null;
    }
  }
  return links;
}

