// What to do with one delivered message: the retry / dead-letter policy both drivers share.
import type { Logger } from 'pino';
import type { BusTelemetry } from './bus-telemetry';
import { decodeEnvelope, describeError } from './envelope';
import { isStoreOutage, outageBackoffMs } from './store-outage';
import { NonRetryableError, type Envelope, type MessageHandler, type MessageValidator } from './types';

export const DEFAULT_PREFETCH = 32;
export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_RETRY_DELAY_MS = 200;

export type Settlement =
  | { kind: 'ack'; envelope: Envelope }
  /** `attempts` failures so far; deliver again after `delayMs`. */
  | { kind: 'retry'; attempts: number; delayMs: number; reason: string; envelope: Envelope }
  | { kind: 'dead'; attempts: number; reason: string; envelope: Envelope | null }
  /** The consumer stopped while the delivery waited out a store outage: give it back, no attempt spent. */
  | { kind: 'requeue'; reason: string; envelope: Envelope };

export interface DeliveryPolicy {
  handler: MessageHandler;
  validator: MessageValidator;
  maxAttempts: number;
  retryDelayMs: number;
  logger: Logger;
  service: string;
  /** Measures and traces each delivery (bus-telemetry.ts). */
  telemetry?: BusTelemetry;
  /**
   * Set once the consumer drains or closes: a delivery waiting out a store outage stops waiting and
   * is given back (settlement `requeue`).
   */
  stopping?: AbortSignal;
  /** Longest wait between two tries while a store is out of reach. Default 120 000 ms. */
  maxOutageBackoffMs?: number;
  /** Called on each try a store outage holds back (for a metric). */
  onOutage?: () => void;
}

/**
 * Decodes, validates and runs the handler; never throws. `headers` carry the publisher's trace context.
 * `checked`: this very body passed this policy's validator when it was published (the in-process
 * broker knows it), so it is parsed without checking it a second time. `parsed`: the body as the
 * in-process publisher already parsed it (its first delivery only), so it is not parsed again.
 */
export async function settleDelivery(body: string, previousFailures: number, policy: DeliveryPolicy, headers: Record<string, unknown> = {}, checked = false, parsed?: unknown): Promise<Settlement> {
  if (!policy.telemetry) return settle(body, previousFailures, policy, checked, parsed);
  return policy.telemetry.consume(policy.service, headers, () => settle(body, previousFailures, policy, checked, parsed));
}

async function settle(body: string, previousFailures: number, policy: DeliveryPolicy, checked: boolean, parsed: unknown): Promise<Settlement> {
  const decoded = decodeEnvelope(body, checked ? null : policy.validator, parsed);
  // A message that fails its schema cannot get better by retrying.
  if (!decoded.ok) return { kind: 'dead', attempts: previousFailures + 1, reason: decoded.reason, envelope: null };
  const envelope = decoded.envelope;
  // A store out of reach is not this message's fault: hold the delivery (the consumer's prefetch
  // then keeps it from taking more) and try again with backoff, spending no attempt, until the
  // store answers, another error comes, or the consumer stops.
  for (let pauses = 0; ; pauses += 1) {
    try {
      await policy.handler(envelope);
      if (pauses > 0) policy.logger.info({ service: policy.service, type: envelope.type, id: envelope.id, pauses }, 'bus: store reachable again; delivery handled');
      return { kind: 'ack', envelope };
    } catch (err) {
      if (!isStoreOutage(err)) return failed(err, envelope, previousFailures, policy);
      const reason = describeError(err);
      if (policy.stopping?.aborted) return { kind: 'requeue', reason, envelope };
      const waitMs = outageBackoffMs(pauses, policy.maxOutageBackoffMs);
      policy.onOutage?.();
      const log = { service: policy.service, type: envelope.type, id: envelope.id, pauses: pauses + 1, waitMs, err: reason };
      if (pauses === 0) policy.logger.warn(log, 'bus: a store is out of reach; holding the delivery and trying again (no attempt spent)');
      else policy.logger.debug(log, 'bus: store still out of reach');
      if (!(await pause(waitMs, policy.stopping))) return { kind: 'requeue', reason, envelope };
    }
  }
}

/** Waits `ms`; false when `stopping` fired first. */
function pause(ms: number, stopping: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stopping?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    stopping?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A failure on a reachable store: one attempt spent, then a retry or the dead-letter queue. */
function failed(err: unknown, envelope: Envelope, previousFailures: number, policy: DeliveryPolicy): Settlement {
  const attempts = previousFailures + 1;
  const reason = describeError(err);
  const log = { service: policy.service, type: envelope.type, id: envelope.id, attempts, err: reason };
  if (err instanceof NonRetryableError) {
    policy.logger.warn(log, 'bus: handler failed (non-retryable), dead-lettering');
    return { kind: 'dead', attempts, reason, envelope };
  }
  if (attempts >= policy.maxAttempts) {
    policy.logger.warn(log, 'bus: handler failed, attempts exhausted, dead-lettering');
    return { kind: 'dead', attempts, reason, envelope };
  }
  policy.logger.info(log, 'bus: handler failed, will retry');
  return { kind: 'retry', attempts, delayMs: policy.retryDelayMs * attempts, reason, envelope };
}

export function failuresFrom(headers: Record<string, unknown> | undefined, key: string): number {
  const n = Number(headers?.[key] ?? 0);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
