// The served script's budget: under 2 KB gzipped. Checks a fresh bundle of the source, and the built
// dist/t.js that the gateway serves (building it first when it is missing).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { bundleTracker } from './bundle';
import { trackerScript, trackerScriptPath } from './index';

const BUDGET_BYTES = 2048;

describe('tracker script size', () => {
  let fresh: string;
  beforeAll(async () => {
    fresh = await bundleTracker();
  });

  it('bundles to a self-contained IIFE with no imports or exports', () => {
    expect(fresh).not.toMatch(/\brequire\(|\bimport\s*[{("']|\bexport\s/);
    expect(fresh).toContain('sightline');
    expect(fresh).toContain('/collect');
  });

  it(`gzips under ${BUDGET_BYTES} bytes`, () => {
    expect(gzipSync(fresh, { level: 9 }).length).toBeLessThan(BUDGET_BYTES);
  });

  it('serves the built dist/t.js, within the same budget', () => {
    const file = trackerScriptPath();
    expect(file).toBe(path.resolve(__dirname, '..', 'dist', 't.js'));
    if (!existsSync(file)) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, fresh);
    }
    const served = trackerScript();
    expect(served.length).toBeGreaterThan(0);
    expect(gzipSync(served, { level: 9 }).length).toBeLessThan(BUDGET_BYTES);
  });
});
