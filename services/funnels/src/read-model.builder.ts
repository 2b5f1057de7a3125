// Builds the read model of funnels whose generation is new (created, definition changed, operator
// rebuild): claims one website's building funnels with a lease in Postgres (so one process builds a
// website at a time, and a crashed build is taken over when its lease runs out), computes every
// attempt from the facts, marks each funnel ready, then removes attempts no funnel reads any more.
// Runs in the background of every process that runs funnels; the definition write stays fast.
import type { Logger } from '@sightline/kit';
import type { FunnelRow, FunnelsRepo } from './funnels.repo';
import { refOf, type FunnelRef, type ReadModel } from './read-model';

export interface BuilderOptions {
  /** How long a claim holds without progress (default 120 s). */
  leaseSeconds?: number;
  /** How often to look for work when not woken (default 5 s). */
  idleMs?: number;
}

class Stopped extends Error {}

export class Builder {
  private stopped = false;
  private woken = false;
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private readonly leaseSeconds: number;
  private readonly idleMs: number;

  constructor(private readonly readModel: ReadModel, private readonly repo: FunnelsRepo, private readonly logger: Logger, options: BuilderOptions = {}) {
    this.leaseSeconds = options.leaseSeconds ?? 120;
    this.idleMs = options.idleMs ?? 5_000;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** A funnel may be waiting: look now. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let claimed: FunnelRow[] = [];
      try {
        claimed = await this.repo.claimBuild(this.leaseSeconds);
      } catch (error) {
        this.logger.error({ err: error }, 'funnels read model: cannot claim a build');
      }
      if (claimed.length > 0) await this.build(claimed);
      else await this.idle();
    }
  }

  private async idle(): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.idleMs);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = null;
    this.woken = false;
  }

  private async build(rows: FunnelRow[]): Promise<void> {
    const first = rows[0] as FunnelRow;
    const scope = { websiteId: first.website_id, workspaceId: first.workspace_id };
    let live: FunnelRef[] = rows.map(refOf);
    const started = Date.now();
    try {
      const stored = await this.readModel.build(scope, live, async (done, total) => {
        if (this.stopped) throw new Stopped('stopping');
        const still: FunnelRef[] = [];
        for (const ref of live) if (await this.repo.buildProgress(ref, done, total, this.leaseSeconds)) still.push(ref);
        live = still;
        return live;
      });
      for (const ref of live) await this.repo.buildDone(ref);
      this.logger.info({ website_id: scope.websiteId, funnels: live.map((r) => r.id), attempts: stored, seconds: (Date.now() - started) / 1000 }, 'funnels read model built');
      await this.readModel.purge(() => this.repo.generations());
    } catch (error) {
      if (error instanceof Stopped) {
        await this.repo.releaseBuild(live).catch(() => undefined);
        return;
      }
      this.logger.error({ err: error, website_id: scope.websiteId }, 'funnels read model: build failed; retried when its lease runs out');
      for (const ref of live) await this.repo.buildFailed(ref, error instanceof Error ? error.message : String(error)).catch(() => undefined);
    }
  }
}
