// GET /api/v1/jobs/{id}/events end to end: real gateways, a real worker running ffmpeg, the run's
// Redis, and the media on a local origin (the video trickled, so the merge runs long enough to report
// progress). The queue is paused while streams open, so their first event is reliably "queued".
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'bullmq';
import request from 'supertest';
import { DOWNLOAD_QUEUE, JobSchema, type JobView } from '@reelay/contracts';
import { createLogger } from '@reelay/observability';
import type { RedisClient } from '@reelay/redis';
import { startOrigin, startRedis, testMedia, testRedisClient, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, testConfig, testRedis, type TestGateway } from './helpers.js';
import { openEvents, type SseEvent } from './sse-client.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-events-'));
const queuePrefix = `{test-events-${randomBytes(4).toString('hex')}}`;
const env = { DATA_DIR: dataDir, RATE_LIMIT_V1_PER_MIN: '0', MAX_ACTIVE_JOBS_PER_CLIENT: '1000' };
let origin: Origin;
let media: TestMedia;
let worker: RunningWorker;
const served: { gw: TestGateway; server: Server; base: string }[] = [];

// This file's gateways name their Redis connections (duplicates inherit the name), so counting them
// is not thrown off by the other test files sharing the run's Redis.
const CONNECTION_NAME = `job-events-test-${process.pid}`;

async function serve(): Promise<{ gw: TestGateway; base: string }> {
  const redis = await testRedis();
  (redis.options as { connectionName?: string }).connectionName = CONNECTION_NAME;
  await redis.client('SETNAME', CONNECTION_NAME);
  const gw = await buildGateway({ env, redis, deps: { queuePrefix, eventStream: { heartbeatMs: 200 } } });
  const server = gw.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const entry = { gw, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  served.push(entry);
  return entry;
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  // The video trickles over ~3 s (a faststart file: ffprobe still answers from its first bytes): the
  // merge then runs past the worker's 1 s progress interval and reports percentages on the way.
  const video = fs.readFileSync(media.videoOnlyMp4);
  origin.route('/media/video-only.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length });
    let sent = 0;
    const timer = setInterval(() => {
      const n = Math.ceil(video.length / 60);
      res.write(video.subarray(sent, sent + n));
      sent += n;
      if (sent < video.length) return;
      clearInterval(timer);
      res.end();
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
  origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
  worker = await startWorker({
    config: testConfig(env),
    logger: createLogger({ name: 'worker-test', level: 'silent' }),
    metricsPort: 0,
    prefix: queuePrefix,
    dataDir,
  });
});

afterAll(async () => {
  await worker?.stop();
  for (const { gw, server } of served) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await gw.close();
  }
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A new merge job (each with its own filename, so never the same request twice), queued while paused. */
async function startMerge(gw: TestGateway): Promise<string> {
  const page = `/split-${randomBytes(4).toString('hex')}.html`;
  origin.body(
    page,
    `<!doctype html><title>Split</title><video><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"'><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>`,
    'text/html',
  );
  const extracted = await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: `${origin.base}${page}` })
    .expect(200);
  const sources: { url: string; stream_profile: string }[] = extracted.body.data.media[0].sources;
  const video = sources.find((s) => s.stream_profile === 'video_only')!.url;
  const audio = sources.find((s) => s.stream_profile === 'audio_only')!.url;
  const started = await request(gw.app)
    .post('/api/v1/download')
    .send({ video_url: video, audio_url: audio, filename: page.slice(1, -5) })
    .expect(202);
  return started.body.data.job_id;
}

const job = (event: SseEvent): JobView => JobSchema.parse(JSON.parse(event.data));

/** Waits for the server to end the stream, then returns every event it sent. */
async function untilEnd(stream: Awaited<ReturnType<typeof openEvents>>): Promise<SseEvent[]> {
  await stream.ended;
  return stream.events;
}

describe('GET /api/v1/jobs/{id}/events', () => {
  test('an unknown or malformed id answers 404 job_not_found as JSON', async () => {
    const { base } = served[0] ?? (await serve());
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', 'not-a-job', 'x'.repeat(300)]) {
      const stream = await openEvents(base, `/api/v1/jobs/${id}/events`);
      await stream.ended;
      expect(stream.status).toBe(404);
      expect(stream.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(stream.text)).toEqual({
        success: false,
        error: { code: 'job_not_found', message: expect.any(String) },
      });
    }
  });

  test("a merge job's stream starts with its current state, shows queued, processing, progress and completed, then ends", async () => {
    const { gw, base } = served[0] ?? (await serve());
    await gw.queue.pause();
    const id = await startMerge(gw);
    const stream = await openEvents(base, `/api/v1/jobs/${id}/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    expect(stream.headers['cache-control']).toMatch(/no-cache/);
    expect(stream.headers['x-accel-buffering']).toBe('no');
    expect(stream.headers['content-encoding']).toBeUndefined(); // asked for gzip: never compressed
    const [first] = await stream.waitFor(1);
    // The first event is the job exactly as GET /api/v1/jobs/{id} shows it.
    expect(first.event).toBe('job');
    expect(job(first)).toEqual((await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data);
    expect(job(first).status).toBe('queued');
    // While nothing changes, comment lines keep the stream alive (heartbeat shortened to 200 ms here).
    await new Promise((r) => setTimeout(r, 700));
    expect(stream.comments).toBeGreaterThanOrEqual(2);
    await gw.queue.resume();

    const events = await untilEnd(stream);
    expect(stream.retry).toBeGreaterThan(0);
    const jobs = events.map(job);
    expect(events.every((e) => e.event === 'job')).toBe(true);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(jobs.map((j) => j.status)).toEqual(expect.arrayContaining(['queued', 'processing', 'completed']));
    expect(jobs.some((j) => j.status === 'processing' && j.progress > 0 && j.progress < 100)).toBe(true);
    // The terminal event is the last one, and is the job as GET shows it now.
    expect(jobs.at(-1)).toEqual((await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data);
    expect(jobs.at(-1)).toMatchObject({
      status: 'completed',
      progress: 100,
      artifact: { filename: expect.any(String) },
    });
  }, 30_000);

  test('Last-Event-ID resumes after that id, and after the terminal event the answer is 204', async () => {
    const { gw, base } = served[0] ?? (await serve());
    const id = await startMerge(gw);
    const all = await untilEnd(await openEvents(base, `/api/v1/jobs/${id}/events`));
    expect(job(all.at(-1)!).status).toBe('completed');
    // The job has ended: a new stream gives its current (terminal) state once, then ends.
    const again = await untilEnd(await openEvents(base, `/api/v1/jobs/${id}/events`));
    expect(again.map((e) => [e.id, job(e).status])).toEqual([[all.at(-1)!.id, 'completed']]);
    // Resuming after an earlier event gives only what is later.
    const resumed = await untilEnd(
      await openEvents(base, `/api/v1/jobs/${id}/events`, { 'last-event-id': all[0].id! }),
    );
    expect(resumed.map((e) => e.id)).toEqual([all.at(-1)!.id]);
    // Resuming after the terminal event: 204, which tells an EventSource to stop reconnecting.
    const done = await openEvents(base, `/api/v1/jobs/${id}/events`, { 'last-event-id': all.at(-1)!.id! });
    await done.ended;
    expect(done.status).toBe(204);
    // A garbled Last-Event-ID counts as none.
    const garbled = await untilEnd(
      await openEvents(base, `/api/v1/jobs/${id}/events`, { 'last-event-id': 'yesterday' }),
    );
    expect(garbled.map((e) => e.id)).toEqual([all.at(-1)!.id]);
  }, 30_000);

  test('two gateway instances both serve the events of one job', async () => {
    const a = served[0] ?? (await serve());
    const b = served[1] ?? (await serve());
    await a.gw.queue.pause();
    const id = await startMerge(a.gw);
    const streams = await Promise.all([
      openEvents(a.base, `/api/v1/jobs/${id}/events`),
      openEvents(b.base, `/api/v1/jobs/${id}/events`),
    ]);
    await Promise.all(streams.map((s) => s.waitFor(1)));
    await a.gw.queue.resume();
    const [fromA, fromB] = await Promise.all(streams.map(untilEnd));
    for (const events of [fromA, fromB]) expect(job(events.at(-1)!).status).toBe('completed');
    expect(fromB.at(-1)).toEqual(fromA.at(-1));
  }, 30_000);

  test('500 concurrent streams on one gateway all receive the terminal event, through one Redis reader', async () => {
    const { gw, base } = served[0] ?? (await serve());
    await gw.queue.pause();
    const id = await startMerge(gw);
    // On a cluster CLIENT LIST answers for one node (any): ask every node.
    const nodes: RedisClient[] = 'nodes' in gw.redis ? gw.redis.nodes('all') : [gw.redis];
    const clients = async () =>
      (await Promise.all(nodes.map((node) => node.call('CLIENT', 'LIST'))))
        .join('\n')
        .split('\n')
        .filter((line) => line.includes(` name=${CONNECTION_NAME} `)).length;
    await openEvents(base, `/api/v1/jobs/${id}/events`).then((s) => s.waitFor(1).then(() => s.close())); // the reader exists
    const before = await clients();
    const streams = await Promise.all(Array.from({ length: 500 }, () => openEvents(base, `/api/v1/jobs/${id}/events`)));
    await Promise.all(streams.map((s) => s.waitFor(1)));
    expect(gw.events.listeners).toBe(500);
    // 500 open streams add no Redis connection: they share the process's one reader.
    expect(await clients()).toBe(before);
    await gw.queue.resume();
    const ends = await Promise.all(streams.map(untilEnd));
    expect(ends.map((events) => job(events.at(-1)!).status)).toEqual(Array(500).fill('completed'));
    expect(gw.events.listeners).toBe(0);
  }, 60_000);

  test('with Redis unreachable a stream is refused at once with 503 service_unavailable as JSON, not left hanging', async () => {
    const redis = await startRedis();
    const gw = await buildGateway({
      env: { ...env, REDIS_URL: redis.url },
      redis: await testRedis(redis.url),
      deps: { queuePrefix: 'outage' },
    });
    const server = gw.app.listen(0, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await redis.stop();
      const stream = await openEvents(base, '/api/v1/jobs/AAAAAAAAAAAAAAAAAAAAAA/events');
      await stream.ended;
      expect(stream.status).toBe(503);
      expect(JSON.parse(stream.text)).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gw.close();
    }
  }, 20_000);

  test('progress goes out at most 4 times a second however often it is written, and the latest percent still arrives', async () => {
    const prefix = `{test-progress-${randomBytes(4).toString('hex')}}`;
    const gw = await buildGateway({ env, deps: { queuePrefix: prefix } });
    const server = gw.app.listen(0, '127.0.0.1');
    const connection = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let writing = { first: 0, last: 0 };
    // A BullMQ worker of the test's own that writes progress 60 times in a row, 10 ms apart.
    const worker = new Worker(
      DOWNLOAD_QUEUE,
      async (running) => {
        writing.first = Date.now();
        for (let p = 1; p <= 60; p++) {
          await running.updateProgress(p);
          await new Promise((r) => setTimeout(r, 10));
        }
        writing.last = Date.now();
        await released;
        return { filename: 'tone.mp3', content_type: 'audio/mpeg', size: 1, expires_at: Date.now() + 60_000 };
      },
      { connection, prefix, autorun: false },
    );
    try {
      await new Promise<void>((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const id = randomBytes(16).toString('base64url');
      await gw.queue.add('download', { id, operation: 'convert' }, { jobId: id });
      const stream = await openEvents(base, `/api/v1/jobs/${id}/events`);
      await stream.waitFor(1);
      void worker.run();
      const deadline = Date.now() + 15_000;
      while (!(writing.last && stream.events.some((e) => job(e).progress === 60)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const processing = stream.events.map(job).filter((j) => j.status === 'processing');
      expect(processing.at(-1)?.progress).toBe(60);
      const writtenFor = writing.last - writing.first;
      // One event when it starts, then at most one per 250 ms of writing, and one trailing event.
      expect(processing.length).toBeLessThanOrEqual(3 + Math.ceil(writtenFor / 250));
      expect(processing.length).toBeLessThan(20);
      release();
      await stream.ended;
      expect(job(stream.events.at(-1)!).status).toBe('completed');
    } finally {
      release();
      await worker.close();
      await connection.quit();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gw.close();
      writing = { first: 0, last: 0 };
    }
  }, 30_000);
});
