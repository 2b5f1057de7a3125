// Loads PGlite through Node's own module loader, outside any module sandbox. PGlite's CommonJS
// build uses dynamic `import()`, which jest's vm sandbox refuses without
// --experimental-vm-modules; under plain Node this is the ordinary `require`.
import { runInThisContext } from 'node:vm';

type PgliteModule = typeof import('@electric-sql/pglite');

function hostRequire(): NodeJS.Require {
  // Evaluated in the process's main context, so it reaches the real `module` builtin.
  const createRequire = runInThisContext(
    'typeof process.getBuiltinModule === "function" ? process.getBuiltinModule("module").createRequire : undefined',
  ) as ((path: string) => NodeJS.Require) | undefined;
  return createRequire ? createRequire(__filename) : require;
}

let loaded: PgliteModule | undefined;

export function loadPglite(): PgliteModule {
  loaded ??= hostRequire()('@electric-sql/pglite') as PgliteModule;
  return loaded;
}
