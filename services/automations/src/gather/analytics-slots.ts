// Gathering runs inside the workspace's cap on concurrent analytics queries, the one the gateway
// applies to people's reads: before each query the gatherer takes one of the workspace's slots from
// the gateway (gateway.acquireAnalyticsSlot, a lease so a crashed gatherer's slot lapses), and gives
// it back after. Background work may hold at most BACKGROUND_ANALYTICS_QUERIES of them (the gateway
// decides), so people's queries always keep the rest. While its share is busy a query waits, with
// backoff, up to a bound; past it the query fails and the alert's cron time passes without a message.
import { RpcNoConsumerError, type ServiceBus } from '@sightline/kit';
import type { Logger } from 'pino';

export interface SlotLease {
  release(): Promise<void>;
}

export interface AnalyticsSlots {
  /** A slot of the workspace's, or null when none came free within the wait. */
  acquire(workspaceId: string): Promise<SlotLease | null>;
  /** How long acquire waits at most, for messages. */
  readonly waitMs: number;
}

export interface AnalyticsSlotOptions {
  /** How long a slot is held at most: the query's deadline and a margin. */
  leaseMs: number;
  /** How long to wait for a slot before giving up. */
  waitMs: number;
  /** Deadline of one call to the gateway. */
  callTimeoutMs: number;
  logger: Logger;
  /** First pause between tries, doubled up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const NOTHING_HELD: SlotLease = { release: async () => undefined };

export function createAnalyticsSlots(bus: ServiceBus<'automations'>, options: AnalyticsSlotOptions): AnalyticsSlots {
  const first = options.backoffMs ?? 100;
  const most = options.maxBackoffMs ?? 2_000;
  let warnedNoGateway = false;
  return {
    waitMs: options.waitMs,
    async acquire(workspaceId) {
      const deadline = Date.now() + options.waitMs;
      for (let pause = first; ; pause = Math.min(most, pause * 2)) {
        try {
          const { lease_id: leaseId } = await bus.call('gateway.acquireAnalyticsSlot', { workspace_id: workspaceId, lease_ms: options.leaseMs }, { timeoutMs: options.callTimeoutMs });
          if (leaseId !== null) return { release: () => release(bus, options, workspaceId, leaseId) };
        } catch (error) {
          // No gateway in this process set (a test or tool running automations alone): nobody's
          // queries go through one then, so there is no cap to share; the gatherer's own bound holds.
          if (error instanceof RpcNoConsumerError) {
            if (!warnedNoGateway) options.logger.warn('automations: no gateway serves analytics slots; gathering runs at its own concurrency');
            warnedNoGateway = true;
            return NOTHING_HELD;
          }
          // A slow or failing gateway counts as busy: try again within the wait.
          options.logger.debug({ err: error instanceof Error ? error.message : String(error) }, 'automations: analytics slot request failed');
        }
        const left = deadline - Date.now();
        if (left <= 0) return null;
        // Jitter: gatherers on several replicas do not retry in step.
        await sleep(Math.min(left, pause * (0.5 + Math.random() / 2)));
      }
    },
  };
}

async function release(bus: ServiceBus<'automations'>, options: AnalyticsSlotOptions, workspaceId: string, leaseId: string): Promise<void> {
  try {
    await bus.call('gateway.releaseAnalyticsSlot', { workspace_id: workspaceId, lease_id: leaseId }, { timeoutMs: options.callTimeoutMs });
  } catch (error) {
    // The lease lapses on its own.
    options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'automations: analytics slot not given back; it lapses with its lease');
  }
}
