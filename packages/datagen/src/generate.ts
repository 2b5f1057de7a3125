// Entry point: generateWorkspace(options) describes a workspace; its iterators replay it on demand.
// Every iterator reruns the seeded simulation from the start, so each is independent and repeatable.
import { adSpendRows } from './ad-spend';
import { buildContext, resolveOptions, type Context } from './context';
import type { CampaignDef } from './model';
import { importedContactCount, importedContacts } from './people';
import { Simulation } from './simulation';
import type {
  AdSpendRow, CrmMilestone, GenerateOptions, ImportedContact, IngestBatch, ResolvedOptions, StoreOrder, WorkspaceRecord,
  WorkspaceSummary,
} from './types';

/** One pass over everything in time order; `stats` counts what has been yielded so far. */
export interface WorkspaceStream extends Iterable<WorkspaceRecord> {
  readonly stats: WorkspaceSummary;
}

export interface Workspace {
  readonly options: ResolvedOptions;
  readonly brand: string;
  readonly campaigns: readonly CampaignDef[];
  /** HTTP batches, store orders and CRM milestones interleaved in time order (one simulation pass). */
  stream(): WorkspaceStream;
  /** Only the ingestion requests: collect hits and server-side event batches, in time order. */
  batches(): Generator<IngestBatch>;
  orders(): Generator<StoreOrder>;
  milestones(): Generator<CrmMilestone>;
  adSpend(): Generator<AdSpendRow>;
  contacts(): Generator<ImportedContact>;
  /** Counts by kind. Runs one simulation pass without keeping anything, so memory stays flat. */
  summary(): WorkspaceSummary;
  /** 0..1 position of a timestamp in the window, for progress bars. */
  progress(ts: number): number;
}

export function generateWorkspace(options: GenerateOptions): Workspace {
  const opts = resolveOptions(options);
  const ctx: Context = buildContext(opts);
  const stream = (): WorkspaceStream => {
    const sim = new Simulation(ctx);
    return { stats: sim.stats, [Symbol.iterator]: () => sim.run() };
  };
  return {
    options: opts,
    brand: ctx.site.brand,
    campaigns: ctx.campaigns,
    stream,
    *batches() {
      for (const r of stream()) if (r.kind === 'collect' || r.kind === 'events') yield r;
    },
    *orders() {
      for (const r of stream()) if (r.kind === 'order') yield r.order;
    },
    *milestones() {
      for (const r of stream()) if (r.kind === 'milestone') yield r.milestone;
    },
    adSpend: () => adSpendRows(ctx),
    contacts: () => importedContacts(opts),
    summary() {
      const s = stream();
      for (const _ of s) void _;
      let adRows = 0;
      for (const _ of adSpendRows(ctx)) adRows++;
      return { ...s.stats, adSpendRows: adRows, importedContacts: importedContactCount(opts.visitors) };
    },
    progress: (ts) => Math.min(1, Math.max(0, (ts - opts.start) / (opts.end - opts.start))),
  };
}
