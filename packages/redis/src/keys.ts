// Keys on a Redis Cluster: a command or script may only touch keys of one slot, and Redis hashes only
// the part of a key between its first `{` and the next `}` (the hash tag) when there is one. So keys
// one script reads together share a tag (an extract cache's result and lock: the URL's hash), and
// keys that are not used together have tags of their own, spreading over the slots.
import { isCluster, type Config } from '@reelay/config';

/** `part` as a key's hash tag: every key holding the same tag lands in the same slot. */
export function hashTag(part: string): string {
  return `{${part}}`;
}

/** `key` without hash-tag braces: a name that still reads like it but hashes as a whole. */
export function withoutHashTags(key: string): string {
  return key.replace(/[{}]/g, '');
}

/**
 * The BullMQ key prefix a deployment uses when none is given: BullMQ's own `bull` on one Redis (the
 * keys existing deployments already hold), and `{reelay}` on a cluster. A hash tag: every queue's
 * keys land in one slot, which BullMQ's scripts need, and in the same slot for all queues, which a
 * flow needs (a collection's parent and its children live in different queues).
 */
export function defaultQueuePrefix(
  config: Pick<Config, 'REDIS_URL'> & Partial<Pick<Config, 'REDIS_CLUSTER'>>,
): string | undefined {
  return isCluster(config) ? hashTag('reelay') : undefined;
}
