// What the gateway does with an identify's signature (issue 24): the bound form is believed; the old
// unbound form (an HMAC of the email alone, replayable by any browser forever) only while the operator
// allows it for a migration (SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND). Each is counted, and websites still
// sending the unbound form are logged, so the operator can tell when the migration is over.
import type { Logger } from 'pino';
import type { IdentifySignatureCheck } from '@sightline/tracker';
import type { GatewayMetrics } from './metrics';

export interface IdentifyPolicy {
  /** Believe the unbound (v1) signature form. Off by default. */
  acceptUnbound: boolean;
}

export function identifyBelieved(check: IdentifySignatureCheck, policy: IdentifyPolicy): boolean {
  return check === 'bound' || (check === 'unbound' && policy.acceptUnbound);
}

/** A website still sending unbound signatures is logged at most this often. */
const UNBOUND_LOG_INTERVAL_MS = 10 * 60_000;
/** Websites remembered for that throttle; a flood of sites cannot grow it further. */
const UNBOUND_LOG_SITES = 10_000;

/** Counts each identify's check, and logs (throttled per website) the unbound ones. */
export function identifyRecorder(metrics: GatewayMetrics, logger: Logger, policy: IdentifyPolicy) {
  const lastLogged = new Map<string, number>();
  return (websiteId: string, checks: readonly IdentifySignatureCheck[]): void => {
    for (const check of checks) metrics.collectIdentifies.inc({ signature: check, outcome: identifyBelieved(check, policy) ? 'believed' : 'refused' });
    const unbound = checks.filter((check) => check === 'unbound').length;
    const now = Date.now();
    if (unbound === 0 || now - (lastLogged.get(websiteId) ?? 0) < UNBOUND_LOG_INTERVAL_MS) return;
    if (lastLogged.size >= UNBOUND_LOG_SITES) lastLogged.clear();
    lastLogged.set(websiteId, now);
    logger.warn(
      { website: websiteId, unbound, believed: policy.acceptUnbound },
      `website ${websiteId} sends unbound identify signatures (v1), ${policy.acceptUnbound ? 'believed while SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND=true' : 'refused'}; its backend should sign the bound form (tracker README)`,
    );
  };
}
