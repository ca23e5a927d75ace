// Jest runs the TypeScript sources directly (swc, ESM). Workspace packages map to their src/ so
// tests never need a build. A private redis-server and the test media are set up once per run.
//
// Two selections of the same tests (docs/development.md, "Test suites"):
// - `suite`: every `test/**/*.test.ts` except scenarios: what `pnpm test` runs, kept under 5 minutes
//   on 2 cores;
// - `scenarios`: files named `*.scenario.test.ts`, the heavy end-to-end runs (scale, failover,
//   peak-measuring hostile inputs, long browser flows, real processes): `pnpm test:scenarios`.
// CI runs both. `pnpm jest <file>` runs any file, whichever selection it belongs to.
const SCENARIO = '\\.scenario\\.test\\.ts$';

/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/apps'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
    ],
  },
  moduleNameMapper: {
    '^@reelay/(gateway|worker)$': '<rootDir>/apps/$1/src/index.ts',
    '^@reelay/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // Both selections name the same modules: jest runs each once per run.
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};

/** @type {import('jest').Config} */
export default {
  projects: [
    {
      ...shared,
      displayName: 'suite',
      testMatch: ['**/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', SCENARIO],
    },
    { ...shared, displayName: 'scenarios', testMatch: [`**/test/**/*.scenario.test.ts`] },
  ],
  // REELAY_TEST_TIMINGS=file records each file's duration (scripts/test-timings.mjs).
  reporters: ['default', '<rootDir>/scripts/test-timings.mjs'],
  testTimeout: 30_000,
  maxWorkers: 2,
};
