// The Pipedrive pull, one page per step so every page is applied with its resume cursor.
// Pipelines and stages are read whole in both modes (few, and stage edits must always arrive);
// organizations, persons and deals are paged with Pipedrive's cursor (`cursor`/`limit`, answer's
// additional_data.next_cursor). Incremental pulls add `updated_since` and sort by update_time.
// Each deal page also reads the changelog of its deals that moved or closed (stage history).
import type { CrmRecords } from '../../records';
import { ProviderError, type PullContext, type PullPage } from '../connector';
import { advance, decodeCursor, encodeCursor, firstCursor, type PipedriveCursor } from './cursor';
import type { PipedriveHttp, PipedriveList, Query } from './http';
import {
  needsChangelog,
  stageHistory,
  toCompany,
  toContact,
  toDeal,
  toPipeline,
  type PdChange,
  type PdDeal,
  type PdOrganization,
  type PdPerson,
  type PdPipeline,
  type PdStage,
} from './mapping';

export interface PullSettings {
  /** Records per list page (Pipedrive allows 1..500). */
  pageSize: number;
  /** Longest wait sat out inside a call; a longer 429 wait (the daily budget) pauses the pull. */
  maxInlineWaitMs: number;
}

/** Connection settings the pull reads: `{"stage_history": false}` skips the changelog calls. */
export function readsStageHistory(settings: Record<string, unknown>): boolean {
  return settings['stage_history'] !== false;
}

const LIST_PATH = { organizations: '/api/v2/organizations', persons: '/api/v2/persons', deals: '/api/v2/deals' } as const;

export async function* pullPipedrive(http: PipedriveHttp, ctx: PullContext, settings: PullSettings): AsyncGenerator<PullPage> {
  let cursor: PipedriveCursor | null = ctx.cursor ? decodeCursor(ctx.cursor) : firstCursor(ctx.since);
  // stage id → pipeline id, for stage history; read once per pull (a resumed pull skips the pipelines phase).
  const state: { stagePipeline: Map<string, string> | null } = { stagePipeline: null };
  const history = readsStageHistory(ctx.settings);
  while (cursor) {
    let step: { records: CrmRecords; next: PipedriveCursor | null };
    try {
      step = await stepOf(http, cursor, settings, state, history);
    } catch (error) {
      // The daily token budget is spent: stop here, keep the position, come back after the reset.
      if (error instanceof ProviderError && error.status === 429 && error.retryAfterMs !== null && error.retryAfterMs > settings.maxInlineWaitMs) {
        yield { records: {}, cursor: encodeCursor(cursor), pause: { until: new Date(Date.now() + error.retryAfterMs).toISOString(), reason: `Pipedrive API limit reached: ${error.message}` } };
        return;
      }
      throw error;
    }
    yield { records: step.records, cursor: step.next ? encodeCursor(step.next) : null };
    cursor = step.next;
  }
}

async function stepOf(http: PipedriveHttp, cursor: PipedriveCursor, settings: PullSettings, state: { stagePipeline: Map<string, string> | null }, history: boolean): Promise<{ records: CrmRecords; next: PipedriveCursor | null }> {
  if (cursor.phase === 'pipelines') {
    const [pipelines, stages] = await Promise.all([readAll<PdPipeline>(http, '/api/v2/pipelines', settings), readAll<PdStage>(http, '/api/v2/stages', settings)]);
    state.stagePipeline = stageMap(stages);
    return { records: { pipelines: pipelines.filter((p) => p.is_deleted !== true).map((p) => toPipeline(p, stages)) }, next: advance(cursor) };
  }
  const page = await http.get<PipedriveList<unknown>>(LIST_PATH[cursor.phase], {
    limit: settings.pageSize,
    cursor: cursor.next ?? undefined,
    ...(cursor.since === null ? { sort_by: 'id', sort_direction: 'asc' } : { updated_since: cursor.since, sort_by: 'update_time', sort_direction: 'asc' }),
  });
  const next = page.additional_data?.next_cursor;
  const following = next ? { ...cursor, next } : advance(cursor);
  const data = page.data ?? [];
  if (cursor.phase === 'organizations') return { records: { companies: (data as PdOrganization[]).filter((o) => o.is_deleted !== true).map(toCompany) }, next: following };
  if (cursor.phase === 'persons') return { records: { contacts: (data as PdPerson[]).filter((p) => p.is_deleted !== true).map(toContact) }, next: following };
  const deals = (data as PdDeal[]).filter((d) => d.is_deleted !== true && d.status !== 'deleted');
  if (!history) return { records: { deals: deals.map((d) => toDeal(d, undefined)) }, next: following };
  state.stagePipeline ??= stageMap(await readAll<PdStage>(http, '/api/v2/stages', settings));
  const stagePipeline = state.stagePipeline;
  const records = [];
  // One deal at a time: the changelog is a per-deal call and the burst limit is per token.
  for (const d of deals) {
    const changes = needsChangelog(d) ? await changelog(http, d.id) : null;
    records.push(toDeal(d, stageHistory(d, changes, stagePipeline)));
  }
  return { records: { deals: records }, next: following };
}

function stageMap(stages: PdStage[]): Map<string, string> {
  return new Map(stages.map((s) => [String(s.id), String(s.pipeline_id)]));
}

/** Every page of a small list (pipelines, stages). */
async function readAll<T>(http: PipedriveHttp, path: string, settings: PullSettings, query: Query = {}): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await http.get<PipedriveList<T>>(path, { ...query, limit: Math.max(settings.pageSize, 100), cursor });
    out.push(...(page.data ?? []));
    cursor = page.additional_data?.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

/** A deal's field changes (v2 has no changelog yet: v1's, cursor-paginated). */
function changelog(http: PipedriveHttp, dealId: number): Promise<PdChange[]> {
  return readAll<PdChange>(http, `/api/v1/deals/${dealId}/changelog`, { pageSize: 500, maxInlineWaitMs: 0 }, {});
}
