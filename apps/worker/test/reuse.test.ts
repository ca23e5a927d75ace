// The reuse index on its own (reuse.ts), with the run's Redis and a real filesystem store: what is
// copied, what never is (a recording, a file about to expire, one already gone), and when two bundles
// are the same. The end-to-end proof (a repeated feed with no ffmpeg) is the gateway's
// collection-reuse.test.ts.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import type { JobInput, JobPayload } from '@reelay/contracts';
import { testRedisClient } from '@reelay/testkit';
import { ArtifactReuse, bundleIdentity, reuseKey } from '../src/reuse.js';
import type { RedisClient } from '@reelay/redis';
import { payload, tempDataDir } from './helpers.js';

const dataDir = tempDataDir('reuse');
const store = new FsArtifactStore(dataDir);
const prefix = `test-reuse-${randomBytes(4).toString('hex')}`;
let redis: RedisClient;
let reuse: ArtifactReuse;
const AUDIO: JobInput = { url: 'http://127.0.0.1/a.m4a', stream_profile: 'audio_only' };

beforeAll(() => {
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 }) as RedisClient;
  reuse = new ArtifactReuse({ redis, prefix, artifacts: store, artifactTtlSeconds: 600 });
});
afterAll(async () => {
  redis?.disconnect();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A finished job of `request_key` with a stored file, remembered as a job's result would be. */
async function finished(requestKey: string, expiresInMs = 60_000): Promise<JobPayload> {
  const job = payload([AUDIO], { request_key: requestKey });
  const dir = await store.makeTempDir(job.id);
  fs.writeFileSync(path.join(dir, 'out'), `bytes of ${requestKey}`);
  const meta = await store.put(job.id, path.join(dir, 'out'), {
    filename: 'Tone.mp3',
    content_type: 'audio/mpeg',
    expires_at: Date.now() + expiresInMs,
  });
  await store.removeTempDir(dir);
  await reuse.keep(job, { ...meta, clip_method: 'copy' });
  return job;
}

test('a job of the same request gets a copy of the living file, with an id and a life of its own', async () => {
  const key = `k-${randomBytes(4).toString('hex')}`;
  const first = await finished(key);
  const second = payload([AUDIO], { request_key: key });
  const dir = await store.makeTempDir(second.id);
  const result = await reuse.take(second, dir);
  expect(result).toMatchObject({
    filename: 'Tone.mp3',
    content_type: 'audio/mpeg',
    clip_method: 'copy',
    reused_from: first.id,
  });
  expect(result!.expires_at).toBeGreaterThan(Date.now() + 590_000);
  const copy = await store.get(second.id);
  expect(fs.readFileSync(copy!.path!, 'utf8')).toBe(`bytes of ${key}`);
  // The original stays; removing the copy (a cancel) leaves it.
  await store.remove(second.id);
  expect(await store.get(first.id)).toBeDefined();
  await store.removeTempDir(dir);
});

test('never reused: another request, a recording, a file about to expire, a file already gone, its own', async () => {
  const key = `k-${randomBytes(4).toString('hex')}`;
  const first = await finished(key);
  const take = async (job: JobPayload) => {
    const dir = await store.makeTempDir(job.id);
    try {
      return await reuse.take(job, dir);
    } finally {
      await store.removeTempDir(dir);
    }
  };
  expect(await take(payload([AUDIO], { request_key: `${key}-other` }))).toBeUndefined();
  expect(
    await take(
      payload([{ url: 'http://127.0.0.1/live.m3u8', stream_profile: 'hls' }], {
        request_key: key,
        operation: 'record',
      }),
    ),
  ).toBeUndefined();
  expect(await take(first)).toBeUndefined();

  const soon = `k-${randomBytes(4).toString('hex')}`;
  const expiring = await finished(soon, 60_000);
  // The file's own expiry is what counts, whatever the index says.
  const stored = await store.get(expiring.id);
  fs.writeFileSync(
    path.join(dataDir, 'artifacts', `${expiring.id}.json`),
    JSON.stringify({ ...stored!.meta, expires_at: Date.now() + 2_000 }),
  );
  expect(await take(payload([], { request_key: soon }))).toBeUndefined();

  const gone = `k-${randomBytes(4).toString('hex')}`;
  const removed = await finished(gone);
  await store.remove(removed.id);
  expect(await take(payload([], { request_key: gone }))).toBeUndefined();
  // Garbage in the index is no file.
  await redis.set(reuseKey(prefix, 'job', 'junk'), 'not json', 'EX', 60);
  expect(await take(payload([], { request_key: 'junk' }))).toBeUndefined();
});

test('two bundles are the same only with the same title, bound and entries (index, title, request)', () => {
  const entries = [
    { index: 1, title: 'A', request_key: 'r1' },
    { index: 2, title: 'B', request_key: 'r2' },
  ];
  const id = bundleIdentity('Tones', 100, entries);
  expect(id).toBe(
    bundleIdentity(
      'Tones',
      100,
      entries.map((e) => ({ ...e })),
    ),
  );
  expect(bundleIdentity('Other', 100, entries)).not.toBe(id);
  expect(bundleIdentity('Tones', 99, entries)).not.toBe(id);
  expect(bundleIdentity('Tones', 100, [entries[0], { ...entries[1], request_key: 'r3' }])).not.toBe(id);
  expect(bundleIdentity('Tones', 100, [entries[0], { ...entries[1], index: 3 }])).not.toBe(id);
  // An entry recorded without its request (an older parent) makes no identity at all.
  expect(bundleIdentity('Tones', 100, [entries[0], { index: 2, title: 'B' }])).toBeUndefined();
});
