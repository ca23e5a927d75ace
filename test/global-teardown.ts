import type { RedisHandle } from '../packages/testkit/src/redis.ts';

export default async function teardown(): Promise<void> {
  await (globalThis as { __REELAY_REDIS__?: RedisHandle }).__REELAY_REDIS__?.stop();
}
