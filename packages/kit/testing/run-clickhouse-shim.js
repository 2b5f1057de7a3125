// Child-process entry for the ClickHouse HTTP shim: `node run-clickhouse-shim.js <dataDir>`.
// Compiles the TypeScript fixture on the fly with @swc/core (already used by jest), starts the
// server, prints `listening <url>`, and exits on SIGTERM or when the parent goes away.
'use strict';
const fs = require('node:fs');
const swc = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

const { serveClickHouseShim } = require('./clickhouse-http-shim.ts');

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: run-clickhouse-shim.js <dataDir> [port]\n');
  process.exit(2);
}

serveClickHouseShim({ dataDir, port: process.argv[3] ? Number(process.argv[3]) : 0 }).then(
  (server) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      server.close().then(() => process.exit(0), () => process.exit(1));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    process.on('disconnect', stop);
    process.stdout.write(`listening ${server.url}\n`);
  },
  (error) => {
    process.stderr.write(`${error && error.stack ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
