// One jest config for the whole repo. Sources are tested as TypeScript through @swc/jest;
// workspace packages resolve to their src/ so no build is needed before tests.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    // Relative ESM-style specifiers ('./start.js', used by dynamic imports) resolve to the TS source.
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@sightline/proto-schemas$': '<rootDir>/proto-schemas/src/index.ts',
    '^@sightline/proto-schemas/(.*)$': '<rootDir>/proto-schemas/src/$1',
    // Shared test code (kit's servers, credit-models' oracle) lives beside src/, outside the built package.
    '^@sightline/(kit|credit-models)/testing/(.*)$': '<rootDir>/packages/$1/testing/$2',
    '^@sightline/(kit|cli|datagen|tracker|periods|client|credit-models)$': '<rootDir>/packages/$1/src/index.ts',
    '^@sightline/(kit|cli|datagen|tracker|periods|client|credit-models)/(.*)$': '<rootDir>/packages/$1/src/$2',
    '^@sightline/service-(.*)$': '<rootDir>/services/$1/src/index.ts',
  },
  testTimeout: 60000,
  // Every answer the test-e2e suites get from the public API is checked against the served OpenAPI
  // document (the setup file does nothing for tests elsewhere).
  setupFilesAfterEnv: ['<rootDir>/test-e2e/contract/setup.ts'],
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
