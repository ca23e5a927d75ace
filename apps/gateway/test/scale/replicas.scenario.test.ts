// Several replicas, one system: 2 gateway and 2 worker processes (the built apps) on one Redis and
// one S3-compatible store, a mixed load through both gateways in turn, one worker SIGKILLed mid-run.
// The scenario itself lives in bench/scale-scenario.mjs, which bench/scale.mjs also runs for figures.
import { beforeAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

interface Figures {
  jobs: number;
  completed: number;
  failed: number;
  lost: number;
  duplicates: number;
  attemptsStarted: number;
  runningOnKilled: number;
  identicalThroughBoth: number;
  directOk: number;
  directs: number;
  playground200: number;
  playground429: number;
  publicLimit: number;
  fivexx: number;
  statuses: Record<string, number>;
}

beforeAll(() => {
  // The processes run the built apps, so build them from the current sources first.
  const build = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-b',
      'apps/gateway/tsconfig.json',
      'apps/worker/tsconfig.json',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
}, 120_000);

test('with one of two workers SIGKILLed mid-run, every job completes exactly once and every artifact reads the same through either gateway, without a 5xx', async () => {
  const scenario = (await import(pathToFileURL(path.join(ROOT, 'bench/scale-scenario.mjs')).href)) as {
    runScaleScenario(o: object): Promise<Figures>;
  };
  const f = await scenario.runScaleScenario({ jobs: 24 });
  expect({ jobs: f.jobs, completed: f.completed, failed: f.failed, lost: f.lost, duplicates: f.duplicates }).toEqual({
    jobs: 24,
    completed: 24,
    failed: 0,
    lost: 0,
    duplicates: 0,
  });
  // The kill really interrupted work: some jobs were started again elsewhere.
  expect(f.runningOnKilled).toBeGreaterThan(0);
  expect(f.attemptsStarted).toBeGreaterThan(f.jobs);
  expect(f.identicalThroughBoth).toBe(24);
  expect(f.directOk).toBe(f.directs);
  // One public budget across both gateways: exactly the limit passes, the rest is 429.
  expect({ ok: f.playground200, limited: f.playground429 }).toEqual({ ok: f.publicLimit, limited: 14 - f.publicLimit });
  expect(f.fivexx).toBe(0);
}, 90_000);
