// Node side of the tracker package: where the built t.js lives and its contents, for the gateway to
// serve at TRACKER_SCRIPT_PATH; plus the collect protocol's types and constants.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export * from './protocol';
export {
  checkIdentifySignature,
  identifyEmailForm,
  identifySignature,
  IDENTIFY_CLOCK_SKEW_SECONDS,
  IDENTIFY_MAX_LIFETIME_SECONDS,
  unboundIdentifySignature,
  type IdentifyBinding,
  type IdentifySignatureCheck,
  type IdentifySignatureInput,
} from './identify';

/** Absolute path of the built script (dist/t.js), the same from src/ under jest and from dist/. */
export function trackerScriptPath(): string {
  return path.resolve(__dirname, '..', 'dist', 't.js');
}

let cached: string | undefined;

/** The built script's text, read once per process. Throws, naming the build command, if it is not built. */
export function trackerScript(): string {
  if (cached === undefined) {
    const file = trackerScriptPath();
    try {
      cached = readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`tracker script not built (${file}): run \`npm run build -w @sightline/tracker\``, {
        cause: err,
      });
    }
  }
  return cached;
}
