// A stand-in consumer with a bug: it consumes conversion.created as changefeed, throws on its first
// `failures` deliveries (on a healthy store, so they spend attempts and end as dead letters), and
// from then on records each message it handles in its store and in `handled`. The redrive tests
// (kit's admin routes, the CLI) start a process with it, let its messages die, then bring them back.
import type { Envelope } from '../src/bus/types';
import { defineStandIn, type RunnableModule } from '../src/module';
import type { KvStore } from '../src/stores/types';

export const FAILING_CONSUMER_TYPE = 'conversion.created';

export interface FailingConsumer {
  module: RunnableModule;
  /** Ids handled after the bug was spent, in order. */
  handled: string[];
  /** Failures still to come (0: the bug is spent). */
  failuresLeft(): number;
  /** The stand-in's store, where each handled message is kept as `handled:<id>`. */
  store(): KvStore | undefined;
}

export function failingConsumer(failures: number): FailingConsumer {
  let failuresLeft = failures;
  let store: KvStore | undefined;
  const handled: string[] = [];
  const module = defineStandIn({
    name: 'changefeed',
    needs: { kv: true },
    async create(ctx) {
      store = ctx.kv;
      return {
        consumers: {
          [FAILING_CONSUMER_TYPE]: async (e: Envelope) => {
            if (failuresLeft > 0) {
              failuresLeft -= 1;
              throw new Error('bug in the handler');
            }
            await ctx.kv.set(`handled:${e.id}`, '1');
            handled.push(e.id);
          },
        },
      };
    },
  });
  return { module, handled, failuresLeft: () => failuresLeft, store: () => store };
}

/** Resolves once `probe` is true, polling every 20 ms; throws naming `what` after `timeoutMs`. */
export async function waitUntil(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
