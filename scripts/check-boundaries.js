#!/usr/bin/env node
// House rules that keep module boundaries from eroding:
// - a service imports packages/* and proto-schemas only, never another service (a test may start
//   another service's module through its package entry, as a deployment would; never its internals);
// - no import reaches outside its own workspace by relative path;
// - only the process entry point (packages/cli) reads process.env.
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative, resolve, dirname, sep } = require('node:path');

const root = resolve(__dirname, '..');
const workspaces = [
  ...readdirSync(join(root, 'services')).map((d) => join('services', d)),
  ...readdirSync(join(root, 'packages')).map((d) => join('packages', d)),
  'proto-schemas',
].filter((d) => statSync(join(root, d)).isDirectory());

const problems = [];
for (const ws of workspaces) {
  const src = join(root, ws, 'src');
  for (const file of walk(src)) {
    const text = readFileSync(file, 'utf8');
    const rel = relative(root, file);
    for (const match of text.matchAll(/(?:from\s+|require\()\s*['"]([^'"]+)['"]/g)) {
      const spec = match[1];
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(join(root, ws) + sep)) problems.push(`${rel}: relative import "${spec}" leaves ${ws}`);
      } else if (spec.startsWith('@sightline/service-') && !ws.startsWith('packages/cli') && !(file.endsWith('.test.ts') && /^@sightline\/service-[a-z-]+$/.test(spec))) {
        problems.push(`${rel}: imports another service (${spec}); services meet only through messages`);
      }
    }
    if (!ws.startsWith('packages/cli') && /process\.env\b/.test(text) && !file.endsWith('.test.ts')) {
      problems.push(`${rel}: reads process.env; take settings as options from the entry point instead`);
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`boundary check failed:\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}
process.stdout.write(`boundary check: ${workspaces.length} workspaces clean\n`);

function* walk(dir) {
  let entries = [];
  try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (/\.(ts|js)$/.test(entry.name)) yield path;
  }
}
