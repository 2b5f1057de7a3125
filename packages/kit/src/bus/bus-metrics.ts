// Optional message counters; a no-op when no registry is given.
import { Counter, type Registry } from 'prom-client';

export type BusDirection = 'published' | 'unroutable' | 'consumed' | 'retried' | 'dead_lettered';

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
          help: 'Bus messages by direction (published, unroutable, consumed, retried, dead_lettered) and service.',
          labelNames: ['direction', 'service'] as const,
          registers: [registry],
        });
  return { count: (direction, service, n = 1) => counter.inc({ direction, service }, n) };
}
