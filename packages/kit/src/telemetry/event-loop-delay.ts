// How long the event loop was kept from running a timer, as a histogram. One process serves every
// tenant's requests and /collect on one thread: a request doing 200 ms of synchronous work delays
// everyone else by 200 ms, which per-request latency alone does not show. A timer due every
// SAMPLE_MS records how late it ran. A block of B ms also swallowed the B / SAMPLE_MS ticks due
// during it: each is recorded as the wait a request arriving then would have had (B, B - 20 ms, ...),
// so the histogram weighs time as a caller lives it and one long block cannot hide among quick ticks.
// (prom-client's default nodejs_eventloop_lag_* gauges are reset at each scrape and cannot be
// aggregated across pods or into quantiles over a range; a histogram can.)
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { histogramOf } from './metric-families';

export const EVENT_LOOP_DELAY_METRIC = 'sightline_event_loop_delay_seconds';
/** Seconds; 0.05 is the budget a request's synchronous work must stay under. */
export const EVENT_LOOP_DELAY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SAMPLE_MS = 20;
/** Ticks recorded for one late timer at most (a 200 s block). */
const MAX_SLOTS = 10_000;

export interface EventLoopDelayMonitor {
  stop(): void;
}

export function monitorEventLoopDelay(registry: Registry): EventLoopDelayMonitor {
  const histogram = histogramOf(
    registry,
    EVENT_LOOP_DELAY_METRIC,
    `How late a timer due every ${SAMPLE_MS} ms ran: time the event loop spent on synchronous work that held up every other request.`,
    [],
    EVENT_LOOP_DELAY_BUCKETS,
  );
  let timer: NodeJS.Timeout | null = null;
  let expected = 0;
  const tick = () => {
    const now = performance.now();
    let late = Math.max(0, now - expected);
    histogram.observe(late / 1000);
    for (let slots = 1; late > SAMPLE_MS && slots < MAX_SLOTS; slots += 1) {
      late -= SAMPLE_MS;
      histogram.observe(late / 1000);
    }
    schedule(now);
  };
  const schedule = (now: number) => {
    expected = now + SAMPLE_MS;
    timer = setTimeout(tick, SAMPLE_MS);
    timer.unref();
  };
  schedule(performance.now());
  return {
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
