// A gateway process told to stop while its Redis is gone still stops: its subscription checks' BullMQ
// worker waits for Redis without end, so the stop bounds it (a benchmark once hung on exactly this).
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startRedis, type RedisHandle } from '@reelay/testkit';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
let redis: RedisHandle;
let child: ChildProcess;

beforeAll(async () => {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/gateway/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  redis = await startRedis();
}, 120_000);

afterAll(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await redis?.stop().catch(() => undefined);
});

test('SIGTERM after Redis went away: the gateway exits within its bound', async () => {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redis.url,
    PORT: String(port),
    LOG_LEVEL: 'info',
  };
  child = spawn(process.execPath, ['apps/gateway/dist/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.resume();
  const deadline = Date.now() + 20_000;
  while (!out.includes('gateway listening')) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`gateway did not start (exit ${child.exitCode}): ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await redis.stop();
  const started = Date.now();
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  // The checks get 3 s, the whole clean-up 10 s: well under the 25 s a stuck process would reach here.
  expect({ code, seconds: Math.round((Date.now() - started) / 1000) <= 12 }).toEqual({ code: 0, seconds: true });
}, 40_000);
