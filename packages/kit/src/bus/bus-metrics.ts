// Optional message counters; a no-op when no registry is given.
import { Counter, type Registry } from 'prom-client';

export type BusDirection = 'published' | 'unroutable' | 'consumed' | 'retried' | 'dead_lettered' | 'dead_letter_dropped' | 'refused' | 'store_outage';

export interface BusMetrics {
  count(direction: BusDirection, service: string, n?: number): void;
}

const NAME = 'sightline_bus_messages_total';

export function busMetrics(registry: Registry | undefined): BusMetrics {
  if (!registry) return { count: () => undefined };
  // Several bus clients may share one registry; registering twice would throw.
  const existing = registry.getSingleMetric(NAME);
  const counter =
    existing instanceof Counter
      ? (existing as Counter<'direction' | 'service'>)
      : new Counter({
          name: NAME,
          help: 'Bus messages by direction (published, unroutable, consumed, retried, dead_lettered; dead_letter_dropped: the in-process broker\'s bounded dead-letter queue let go of its oldest; refused: a publish from outside a handler refused because the in-process backlog was full, answered 503; store_outage: a try held back because a store was out of reach, no attempt spent) and service.',
          labelNames: ['direction', 'service'] as const,
          registers: [registry],
        });
  return { count: (direction, service, n = 1) => counter.inc({ direction, service: serviceLabel(service) }, n) };
}

/**
 * Label values come from a fixed set: a message's source may name an API key (`api:<key id>`) or a
 * provider (`crm:hubspot`), so only its leading word counts (`api`, `crm`, a service's name).
 */
export function serviceLabel(source: string): string {
  const word = source.split(':', 1)[0] ?? '';
  return /^[a-z][a-z0-9_-]{0,31}$/.test(word) ? word : 'other';
}
