import { Registry } from 'prom-client';
import { EVENT_LOOP_DELAY_METRIC, monitorEventLoopDelay } from './event-loop-delay';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function buckets(registry: Registry) {
  return registry.getSingleMetricAsString(EVENT_LOOP_DELAY_METRIC).then((text) => {
    const le = (bound: string) => Number(new RegExp(`_bucket\\{le="${bound}"\\} (\\d+)`).exec(text)?.[1]);
    return { under50ms: le('0.05'), total: le('\\+Inf') };
  });
}

describe('event-loop delay histogram', () => {
  it('weighs a long block by the time it held the loop, so it shows in the p99', async () => {
    const registry = new Registry();
    const monitor = monitorEventLoopDelay(registry);
    try {
      await sleep(1_000);
      const quiet = await buckets(registry);
      expect(quiet.total).toBeGreaterThan(10);
      const end = Date.now() + 1_000;
      while (Date.now() < end) {
        // one second of synchronous work
      }
      await sleep(100);
      const after = await buckets(registry);
      const late = after.total - after.under50ms - (quiet.total - quiet.under50ms);
      // A timer was due every 20 ms through the block: about 48 of them waited more than 50 ms.
      expect(late).toBeGreaterThanOrEqual(40);
      expect(late).toBeLessThanOrEqual(60);
    } finally {
      monitor.stop();
    }
  });
});
