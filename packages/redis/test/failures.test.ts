// Which Redis failures the gateway's error middleware answers as 503 service_unavailable, built as ioredis
// builds them (its ReplyError class, its timeout and connection messages). The replies that need a
// disk or a restart to provoke (MISCONF, LOADING, MASTERDOWN) are checked here; the frozen, full and
// read-only servers are provoked for real in apps/gateway/test/scale/redis-faults.scenario.test.ts.
import { describe, expect, test } from '@jest/globals';
import { ReplyError } from 'ioredis';
import { ReelayError } from '@reelay/contracts';
import { redisUnavailable } from '../src/index.js';

const reply = (message: string): Error => new ReplyError(message) as Error;

describe('a Redis failure', () => {
  test.each([
    'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
    'LOADING Redis is loading the dataset in memory',
    "OOM command not allowed when used memory > 'maxmemory'.",
    "READONLY You can't write against a read only replica.",
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
    'NOREPLICAS Not enough good replicas to write.',
    'BUSY Redis is busy running a script.',
    'NOAUTH Authentication required.',
  ])('replying %s is service_unavailable', (message) => {
    const mapped = redisUnavailable(reply(message));
    expect({ code: mapped?.code, status: mapped?.status }).toEqual({ code: 'service_unavailable', status: 503 });
  });

  test.each([
    'Command timed out',
    'Connection is closed.',
    "Stream isn't writeable and enableOfflineQueue options is false",
  ])('failing with "%s" is service_unavailable', (message) => {
    expect(redisUnavailable(new Error(message))?.code).toBe('service_unavailable');
  });

  test('a transaction discarded because Redis refused a queued write (EXECABORT after OOM) is service_unavailable', () => {
    const aborted = Object.assign(reply('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [reply('OOM command not allowed')],
    });
    expect(redisUnavailable(aborted)?.code).toBe('service_unavailable');
  });

  test('a reply that means a bug in reelay (a wrong type, a bad script) stays a 500', () => {
    expect(
      redisUnavailable(reply('WRONGTYPE Operation against a key holding the wrong kind of value')),
    ).toBeUndefined();
    expect(redisUnavailable(reply('ERR Error running script'))).toBeUndefined();
    expect(
      redisUnavailable(
        Object.assign(reply('EXECABORT Transaction discarded because of previous errors.'), {
          previousErrors: [reply('ERR syntax error')],
        }),
      ),
    ).toBeUndefined();
  });

  test("neither an origin's connection failure nor a ReelayError is taken for Redis", () => {
    expect(
      redisUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })),
    ).toBeUndefined();
    expect(redisUnavailable(new ReelayError('upstream_error', 'Command timed out'))).toBeUndefined();
  });
});
