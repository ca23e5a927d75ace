// Artifacts in an S3-compatible store (s3rver on 127.0.0.1), end to end: a real worker runs ffmpeg
// and uploads, and gateways serve the result streamed through (with Range) or by presigned redirect.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createArtifactStore } from '@reelay/artifacts';
import { createLogger } from '@reelay/observability';
import { startOrigin, startS3, testMedia, type Origin, type S3Handle, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { binary, buildGateway, testConfig, type TestGateway } from '../helpers.js';

let s3: S3Handle;
let origin: Origin;
let media: TestMedia;
let streamed: TestGateway;
let redirecting: TestGateway;
let worker: RunningWorker;
let s3Stopped = false;
const prefix = `test-s3-${randomBytes(4).toString('hex')}`;
const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-s3-worker-'));
const gatewayDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-s3-gateway-'));

beforeAll(async () => {
  [s3, origin, media] = await Promise.all([startS3(), startOrigin(), testMedia()]);
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  // Different DATA_DIRs: nothing is shared between the worker and the gateways but Redis and S3.
  streamed = await buildGateway({ env: { ...s3.env, DATA_DIR: gatewayDir }, deps: { queuePrefix: prefix } });
  redirecting = await buildGateway({
    env: { ...s3.env, DATA_DIR: gatewayDir, ARTIFACT_DELIVERY: 'redirect' },
    deps: { queuePrefix: prefix },
  });
  worker = await startWorker({
    config: testConfig({ ...s3.env, DATA_DIR: workerDir }),
    logger: createLogger({ name: 'w', level: 'silent' }),
    metricsPort: 0,
    prefix,
  });
});

afterAll(async () => {
  await worker?.stop();
  await streamed?.close();
  await redirecting?.close();
  await origin?.close();
  if (!s3Stopped) await s3?.stop();
  for (const dir of [workerDir, gatewayDir]) fs.rmSync(dir, { recursive: true, force: true });
});

async function completedJob(
  format: string,
): Promise<{ id: string; artifact: { url: string; size: number; filename: string } }> {
  await request(streamed.app)
    .post('/api/v1/extract')
    .send({ url: origin.url('/media/clip.mp4') })
    .expect(200);
  const accepted = await request(streamed.app)
    .post('/api/v1/download')
    .send({ url: origin.url('/media/clip.mp4'), format })
    .expect(202);
  const id = accepted.body.data.job_id as string;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const view = (await request(redirecting.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
    if (view.status === 'completed') return { id, artifact: view.artifact };
    if (view.status === 'failed' || Date.now() > deadline) throw new Error(`job ended ${JSON.stringify(view)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('artifacts in S3', () => {
  test('a finished job is uploaded to the bucket and streamed through the gateway, whole and by Range', async () => {
    const { id, artifact } = await completedJob('mkv');
    const store = createArtifactStore(testConfig({ ...s3.env, DATA_DIR: gatewayDir }));
    try {
      expect((await store.get(id))?.meta.size).toBe(artifact.size);
    } finally {
      store.close?.();
    }
    const whole = await request(streamed.app).get(artifact.url).buffer(true).parse(binary).expect(200);
    expect((whole.body as Buffer).length).toBe(artifact.size);
    expect(whole.headers['content-type']).toBe('video/x-matroska');
    expect(whole.headers['content-disposition']).toContain('attachment; filename=');
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const part = await request(streamed.app)
      .get(artifact.url)
      .set('range', 'bytes=100-1099')
      .buffer(true)
      .parse(binary)
      .expect(206);
    expect(part.headers['content-range']).toBe(`bytes 100-1099/${artifact.size}`);
    expect((part.body as Buffer).equals((whole.body as Buffer).subarray(100, 1100))).toBe(true);
    const suffix = await request(streamed.app)
      .get(artifact.url)
      .set('range', 'bytes=-10')
      .buffer(true)
      .parse(binary)
      .expect(206);
    expect((suffix.body as Buffer).equals((whole.body as Buffer).subarray(-10))).toBe(true);
    // The worker kept no local copy: its temp folders are gone and it has no artifacts folder.
    expect(fs.readdirSync(path.join(workerDir, 'tmp'))).toEqual([]);
    expect(fs.existsSync(path.join(workerDir, 'artifacts'))).toBe(false);
  });

  test('a range past the end is answered 416 with the size, and a stale If-Range gets the whole file', async () => {
    const { artifact } = await completedJob('mkv');
    const res = await request(streamed.app)
      .get(artifact.url)
      .set('range', `bytes=${artifact.size + 10}-`);
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${artifact.size}`);
    const stale = await request(streamed.app)
      .get(artifact.url)
      .set('range', 'bytes=0-9')
      .set('if-range', '"other"')
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect((stale.body as Buffer).length).toBe(artifact.size);
  });

  test('with ARTIFACT_DELIVERY=redirect the gateway answers a 60-second presigned URL that serves the same bytes', async () => {
    const { artifact } = await completedJob('webm');
    const whole = await request(streamed.app).get(artifact.url).buffer(true).parse(binary).expect(200);
    const res = await request(redirecting.app).get(artifact.url).expect(302);
    const location = new URL(res.headers.location!);
    expect(location.origin).toBe(s3.endpoint);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('60');
    const fetched = await fetch(location);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-disposition')).toBe(whole.headers['content-disposition']);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(whole.body as Buffer)).toBe(true);
  });

  test('an artifact removed from the bucket answers 410 artifact_expired, not a 500', async () => {
    const { id, artifact } = await completedJob('mkv');
    const store = createArtifactStore(testConfig({ ...s3.env, DATA_DIR: gatewayDir }));
    try {
      await store.remove(id);
    } finally {
      store.close?.();
    }
    const res = await request(streamed.app).get(artifact.url);
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 410, code: 'artifact_expired' });
  });

  // Last: it stops the S3 server.
  test('while the S3 store is unreachable an artifact answers 503 service_unavailable, not a 500', async () => {
    const { artifact } = await completedJob('mkv');
    await s3.stop();
    s3Stopped = true;
    const res = await request(streamed.app).get(artifact.url);
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
  });
});
