#!/usr/bin/env node
// Runs the built CLI (npm run build compiles src/ to dist/).
require('../dist/main.js').main(process.argv).catch((error) => {
  process.stderr.write(`${error && error.message ? error.message : error}\n`);
  process.exit(1);
});
