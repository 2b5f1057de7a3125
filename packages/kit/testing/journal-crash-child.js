// A process that publishes to and consumes from a durable in-process bus as fast as it can, until
// it is killed: journal-crash.int.test.ts kills it with SIGKILL mid-stream. It prints "P <n,...>"
// once a publish is confirmed and "H <n>" when its handler has run (stdout to a pipe is
// synchronous on Linux, so a printed line happened). Uses the built kit (npm run build).
const pino = require('pino');
const { createBus } = require('../dist/bus');

const [dir, padLength] = process.argv.slice(2);
const anything = { validateEnvelope: () => null, validateRpcRequest: () => null, validateRpcResponse: () => null };

(async () => {
  const bus = await createBus({ journalDir: dir, validator: anything, logger: pino({ level: 'silent' }) });
  await bus.consume({
    service: 'crash',
    types: ['test.crash.ping'],
    prefetch: 8,
    handler: async (e) => {
      await new Promise((r) => setImmediate(r));
      process.stdout.write(`H ${e.payload.n}\n`);
    },
  });
  const pad = 'x'.repeat(Number(padLength));
  let next = 0;
  const publisher = async () => {
    for (;;) {
      const batch = [next++, next++, next++, next++];
      await bus.publishMany(batch.map((n) => ({ type: 'test.crash.ping', payload: { n, pad }, source: 'crash' })));
      process.stdout.write(`P ${batch.join(',')}\n`);
    }
  };
  process.stdout.write('ready\n');
  await Promise.all([publisher(), publisher(), publisher(), publisher()]);
})().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
