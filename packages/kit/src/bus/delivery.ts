// What to do with one delivered message: the retry / dead-letter policy both drivers share.
import type { Logger } from 'pino';
import type { BusTelemetry } from './bus-telemetry';
import { decodeEnvelope, describeError } from './envelope';
import { NonRetryableError, type Envelope, type MessageHandler, type MessageValidator } from './types';

export const DEFAULT_PREFETCH = 32;
export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_RETRY_DELAY_MS = 200;

export type Settlement =
  | { kind: 'ack'; envelope: Envelope }
  /** `attempts` failures so far; deliver again after `delayMs`. */
  | { kind: 'retry'; attempts: number; delayMs: number; reason: string; envelope: Envelope }
  | { kind: 'dead'; attempts: number; reason: string; envelope: Envelope | null };

export interface DeliveryPolicy {
  handler: MessageHandler;
  validator: MessageValidator;
  maxAttempts: number;
  retryDelayMs: number;
  logger: Logger;
  service: string;
  /** Measures and traces each delivery (bus-telemetry.ts). */
  telemetry?: BusTelemetry;
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
  try {
    await policy.handler(envelope);
    return { kind: 'ack', envelope };
  } catch (err) {
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
}

export function failuresFrom(headers: Record<string, unknown> | undefined, key: string): number {
  const n = Number(headers?.[key] ?? 0);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
