// jest setupFilesAfterEnv: every test file under test-e2e/ checks each answer of the public API
// against the served OpenAPI document (see hook.ts). Other test files skip it without loading it.
if (/[\\/]test-e2e[\\/]/.test(expect.getState().testPath ?? '')) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./hook') as typeof import('./hook')).installContractCheck();
}
