#!/usr/bin/env node
// `npm run bench -- <name>`: runs one benchmark (or all) and rewrites its section of RESULTS.md.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const available = readdirSync(__dirname).filter((f) => f.endsWith('.bench.js')).map((f) => f.replace(/\.bench\.js$/, ''));
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length > 0 ? wanted : available;
const unknown = names.filter((n) => !available.includes(n));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${available.join(', ')}\n`);
  process.exit(2);
}

(async () => {
  for (const name of names) {
    process.stdout.write(`== ${name}\n`);
    await require(join(__dirname, `${name}.bench.js`)).run();
  }
})().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
