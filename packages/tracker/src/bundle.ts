// Bundles the browser source into the served script. Build-time only (esbuild is a dev dependency):
// index.ts never imports this file, so the gateway loads no bundler at run time.
import path from 'node:path';
import { build } from 'esbuild';

/** The browser entry point; kept outside src/ so the Node type-check never sees DOM code. */
export const TRACKER_SOURCE_PATH = path.resolve(__dirname, '..', 'browser', 'tracker.ts');

/** Returns t.js as a minified IIFE targeting ES2017 browsers. */
export async function bundleTracker(): Promise<string> {
  const result = await build({
    entryPoints: [TRACKER_SOURCE_PATH],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2017'],
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error('esbuild produced no output for the tracker');
  return output.text;
}
