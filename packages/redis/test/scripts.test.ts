// Lua scripts by SHA on a real Redis: sent whole only when Redis does not know them (a restart, a
// SCRIPT FLUSH), refused before sending when the keys do not match, and Redis's own error passed on.
import { afterAll, expect, test } from '@jest/globals';
import { startRedis } from '@reelay/testkit';
import { connectRedis, isReplyError, luaScript, redisReady, runScript } from '../src/index.js';

const INCR_BY = luaScript("return redis.call('INCRBY', KEYS[1], ARGV[1])", 1);
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of stops) await stop();
});

test('a script runs by SHA, and is sent again once Redis has forgotten it', async () => {
  const server = await startRedis();
  const redis = connectRedis(server.url);
  stops.push(
    async () => redis.disconnect(),
    () => server.stop(),
  );
  await redisReady(redis);
  expect(await runScript(redis, INCR_BY, ['n'], [2])).toBe(2);
  const [evalsBefore] = await scriptCalls(redis);
  expect(await runScript(redis, INCR_BY, ['n'], [3])).toBe(5);
  expect((await scriptCalls(redis))[0]).toBe(evalsBefore); // by SHA: no EVAL
  await redis.script('FLUSH');
  expect(await runScript(redis, INCR_BY, ['n'], [1])).toBe(6);
  expect((await scriptCalls(redis))[0]).toBe(evalsBefore + 1); // EVAL once, after NOSCRIPT
});

test('wrong keys are refused before anything is sent; an error Redis answers passes as a reply error', async () => {
  const server = await startRedis();
  const redis = connectRedis(server.url);
  stops.push(
    async () => redis.disconnect(),
    () => server.stop(),
  );
  await redisReady(redis);
  await expect(runScript(redis, INCR_BY, ['a', 'b'], [1])).rejects.toThrow('script expects 1 keys, got 2');
  await redis.set('text', 'not a number');
  const failed = await runScript(redis, INCR_BY, ['text'], [1]).catch((err: unknown) => err);
  expect(isReplyError(failed)).toBe(true);
  // A script of as many keys as each call gives.
  const SET_ALL = luaScript("for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1]) end return #KEYS");
  expect(await runScript(redis, SET_ALL, ['x', 'y', 'z'], ['v'])).toBe(3);
  expect(await redis.mget('x', 'y', 'z')).toEqual(['v', 'v', 'v']);
});

/** [EVAL calls, EVALSHA calls] so far, from INFO commandstats. */
async function scriptCalls(redis: ReturnType<typeof connectRedis>): Promise<[number, number]> {
  const info = (await redis.info('commandstats')) as string;
  const calls = (name: string) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return [calls('eval'), calls('evalsha')];
}
