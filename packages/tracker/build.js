// `npm run build`: tsc compiles src/ (the Node side) into dist/, the browser source is type-checked
// against the DOM with its own tsconfig, then esbuild bundles it into dist/t.js.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

// typescript's exports hide bin/, so find it next to its package.json.
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
for (const project of ['tsconfig.json', path.join('browser', 'tsconfig.json')]) {
  execFileSync(process.execPath, [tsc, '-p', path.join(__dirname, project)], { stdio: 'inherit' });
}

const { bundleTracker } = require('./dist/bundle.js');
bundleTracker()
  .then((code) => fs.writeFileSync(path.join(__dirname, 'dist', 't.js'), code))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
