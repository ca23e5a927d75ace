// Usage per key, counted once the response is finished (off the request's critical path): total
// requests, successful (2xx) requests and the last time the key was presented — atomically, and only
// while the key still exists, so a request racing a delete cannot bring back a stub record.
import type { Redis } from 'ioredis';
import { apiKeyRecord } from './keys.js';
import { luaScript, runScript } from './redis.js';

const RECORD = luaScript(
  `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'total', 1)
if ARGV[1] == '1' then redis.call('HINCRBY', KEYS[1], 'successful', 1) end
redis.call('HSET', KEYS[1], 'last_used_at', ARGV[2])
return 1`,
  1,
);

export class UsageCounter {
  constructor(private readonly redis: Redis) {}

  async record(keyHash: string, successful: boolean, at = Date.now()): Promise<void> {
    await runScript(this.redis, RECORD, [apiKeyRecord(keyHash)], [successful ? '1' : '0', at]);
  }
}
