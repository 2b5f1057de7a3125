#!/usr/bin/env node
// Writes the built OpenAPI document to proto-schemas/openapi.json. Run after `npm run build`
// (the `openapi` script does both); a jest test fails when the committed file is stale.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const distIndex = path.join(__dirname, '..', 'dist', 'index.js');
if (!fs.existsSync(distIndex)) {
  console.error('proto-schemas is not built: run `npm run build -w @sightline/proto-schemas` first.');
  process.exit(1);
}
const { openApiDocument } = require(distIndex);
const target = path.join(__dirname, '..', 'openapi.json');
fs.writeFileSync(target, `${JSON.stringify(openApiDocument, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), target)}`);
