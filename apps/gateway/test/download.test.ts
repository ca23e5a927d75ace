import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { Job, Worker } from 'bullmq';
import { FsArtifactStore } from '@reelay/artifacts';
import { DOWNLOAD_QUEUE, type JobPayload, type JobResult } from '@reelay/contracts';
import { serveFile, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { binary, buildGateway, testRedis, type TestGateway } from './helpers.js';
import { duplicateRedis } from '@reelay/redis';

let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-download-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `{test-dl-${randomBytes(4).toString('hex')}}`;
const refererSeen: string[] = [];

const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

const HLS_MASTER = `#EXTM3U
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",DEFAULT=YES,URI="audio.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="a"
v360.m3u8
`;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.route('/media/clip.mp4', (req, res) => {
    refererSeen.push(String(req.headers.referer ?? ''));
    serveFile(req, res, media.muxedMp4, 'video/mp4');
  });
  origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.file('/media/other-audio.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.file('/media/pic.png', media.png, 'image/png');
  origin.file('/media/poster.jpg', media.jpg, 'image/jpeg');
  origin.body('/media/master.m3u8', HLS_MASTER, 'application/vnd.apple.mpegurl');
  // yt-dlp's float_duration.mpd: an audio and a video representation share the id 318597.
  origin.file(
    '/media/shared.mpd',
    new URL('../../../packages/extractors/test/corpus/dash/ytdlp-float-duration.mpd', import.meta.url).pathname,
    'application/dash+xml',
  );
  origin.body(
    '/page.html',
    `<html><head><title>Café "clip" / 1</title></head><body>
    <video><source src="/media/clip.mp4" type="video/mp4" label="240p"></video>
    </body></html>`,
    'text/html',
  );
  origin.body(
    '/split.html',
    `<html><head><title>Split</title></head><body>
    <video><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>
    </body></html>`,
    'text/html',
  );
  origin.body(
    '/mixed.html',
    `<html><head><title>Mixed</title></head><body>
    <video><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"'><source src="/media/master.m3u8" type="application/x-mpegURL"></video>
    </body></html>`,
    'text/html',
  );
  for (const page of ['A', 'B']) {
    origin.body(
      `/page-${page}.html`,
      `<html><head><title>Page ${page}</title></head><body><video src="/media/clip.mp4?shared"></video></body></html>`,
      'text/html',
    );
  }
  origin.body(
    '/other.html',
    `<html><head><title>Other</title></head><body><audio src="/media/other-audio.m4a"></audio></body></html>`,
    'text/html',
  );
  // A large body the client abandons: the origin must see its request cut.
  origin.route('/media/endless.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4' });
    const chunk = Buffer.alloc(64 * 1024, 1);
    const timer = setInterval(() => res.write(chunk), 5);
    res.on('close', () => clearInterval(timer));
  });
  gw = await buildGateway({ env: { DATA_DIR: dataDir }, deps: { artifacts, queuePrefix: prefix } });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function extract(pathname: string) {
  const res = await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: origin.url(pathname) })
    .expect(200);
  return res.body.data;
}

const download = (body: object) => request(gw.app).post('/api/v1/download').send(body);

function expectError(res: request.Response, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

describe('direct streams', () => {
  test('a progressive source streams the origin bytes with a safe attachment name and the recorded Referer', async () => {
    const data = await extract('/page.html');
    const url = data.media[0].sources[0].url;
    const res = await download({ url }).buffer(true).parse(binary).expect(200);
    expect(sha256(res.body as Buffer)).toBe(sha256(fs.readFileSync(media.muxedMp4)));
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.headers['content-length']).toBe(String(fs.statSync(media.muxedMp4).size));
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Caf_ clip 1.mp4"; filename*=UTF-8''Caf%C3%A9%20clip%201.mp4`,
    );
    expect(refererSeen.at(-1)).toBe(origin.url('/page.html'));
  });

  test('two pages naming the same media URL each download it with their own title and Referer, by extraction_id', async () => {
    const a = await extract('/page-A.html');
    const b = await extract('/page-B.html');
    const url = a.media[0].sources[0].url;
    expect(b.media[0].sources[0].url).toBe(url);
    expect(a.extraction_id).not.toBe(b.extraction_id);
    for (const [data, page] of [
      [a, 'A'],
      [b, 'B'],
    ]) {
      const res = await download({ url, extraction_id: data.extraction_id }).buffer(true).parse(binary).expect(200);
      expect(res.headers['content-disposition']).toBe(`attachment; filename="Page ${page}.mp4"`);
      expect(refererSeen.at(-1)).toBe(origin.url(`/page-${page}.html`));
    }
    // By URL alone, the latest extract that named it answers.
    const plain = await download({ url }).buffer(true).parse(binary).expect(200);
    expect(plain.headers['content-disposition']).toBe('attachment; filename="Page B.mp4"');
    expectError(await download({ url, extraction_id: 'no-such-extraction' }), 400, 'unknown_source');
  });

  test('a media file or image extracted by its own URL streams named with its extension once (clip.mp4, poster.jpg)', async () => {
    for (const [pathname, name] of [
      ['/media/clip.mp4', 'clip.mp4'],
      ['/media/poster.jpg', 'poster.jpg'],
    ]) {
      const url = (await extract(pathname)).media[0].sources[0].url;
      const res = await download({ url }).buffer(true).parse(binary).expect(200);
      expect(res.headers['content-disposition']).toBe(`attachment; filename=${name}`);
    }
  });

  test('a Range request is passed through and answered 206', async () => {
    const data = await extract('/page.html');
    const res = await download({ url: data.media[0].sources[0].url })
      .set('range', 'bytes=100-199')
      .buffer(true)
      .parse(binary)
      .expect(206);
    expect((res.body as Buffer).equals(fs.readFileSync(media.muxedMp4).subarray(100, 200))).toBe(true);
    expect(res.headers['content-range']).toBe(`bytes 100-199/${fs.statSync(media.muxedMp4).size}`);
  });

  test('an image is streamed as it is, and a format asked of it is refused', async () => {
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/media/pic.png') })
      .expect(200);
    const res = await download({ url: origin.url('/media/pic.png') })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect((res.body as Buffer).equals(fs.readFileSync(media.png))).toBe(true);
    expectError(await download({ url: origin.url('/media/pic.png'), format: 'mp4' }), 400, 'invalid_request');
  });

  test('a client that goes away cancels the upstream request', async () => {
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/media/endless.mp4') })
      .expect(200);
    const server = gw.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as { port: number }).port;
    const before = origin.aborted.filter((p) => p === '/media/endless.mp4').length;
    await new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/download',
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', (err) =>
        err.message.includes('aborted') || err.message.includes('socket hang up') ? resolve() : reject(err),
      );
      req.end(JSON.stringify({ url: origin.url('/media/endless.mp4') }));
    });
    const deadline = Date.now() + 5_000;
    while (origin.aborted.filter((p) => p === '/media/endless.mp4').length === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    server.close();
    expect(origin.aborted.filter((p) => p === '/media/endless.mp4').length).toBeGreaterThan(before);
  });

  test('a source larger than MAX_MEDIA_BYTES is refused before streaming', async () => {
    const small = await buildGateway({ env: { DATA_DIR: dataDir, MAX_MEDIA_BYTES: '1000' }, deps: { artifacts } });
    try {
      await request(small.app)
        .post('/api/v1/extract')
        .send({ url: origin.url('/page.html') })
        .expect(200);
      expectError(
        await request(small.app)
          .post('/api/v1/download')
          .send({ url: origin.url('/media/clip.mp4') }),
        502,
        'upstream_error',
      );
    } finally {
      await small.close();
    }
  });
});

describe('download requests', () => {
  test.each([
    [{}, 'invalid_request'],
    [{ url: 'http://x/', video_url: 'http://x/v', audio_url: 'http://x/a' }, 'invalid_request'],
    [{ video_url: 'http://x/v' }, 'invalid_request'],
    [{ url: 42 }, 'invalid_request'],
    [{ url: 'http://x/', format: 'avi' }, 'invalid_request'],
    [{ url: 'http://x/', extra: true }, 'invalid_request'],
    [{ url: 'http://never-extracted.example/a.mp4' }, 'unknown_source'],
  ])('%j is refused with %s', async (body, code) => {
    expectError(await download(body), 400, code);
  });

  test('a pair from different media items, or not one video and one audio, is invalid_merge_pair', async () => {
    const split = await extract('/split.html');
    const other = await extract('/other.html');
    const [video, audio] = split.media[0].sources.map((s: { url: string }) => s.url);
    expectError(
      await download({ video_url: video, audio_url: other.media[0].sources[0].url }),
      400,
      'invalid_merge_pair',
    );
    expectError(await download({ video_url: audio, audio_url: video }), 400, 'invalid_merge_pair');
    expectError(await download({ video_url: video, audio_url: video }), 400, 'invalid_merge_pair');
  });

  test('a merge pair starts a job; the same request while it lives returns the same job', async () => {
    const split = await extract('/split.html');
    const [video, audio] = split.media[0].sources.map((s: { url: string }) => s.url);
    const first = await download({ video_url: video, audio_url: audio }).expect(202);
    expect(first.body).toEqual({
      success: true,
      data: {
        job_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        status: 'queued',
        status_url: `/api/v1/jobs/${first.body.data.job_id}`,
        control_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      },
    });
    expect(first.headers.location).toBe(first.body.data.status_url);
    const again = await download({ video_url: video, audio_url: audio }).expect(202);
    expect(again.body.data.job_id).toBe(first.body.data.job_id);
    // The same client's job, with a token of its own (the first stays valid: job-control.test.ts).
    expect(again.body.data.control_token).not.toBe(first.body.data.control_token);
    const other = await download({ video_url: video, audio_url: audio, format: 'mkv' }).expect(202);
    expect(other.body.data.job_id).not.toBe(first.body.data.job_id);

    const job = await request(gw.app).get(first.body.data.status_url).expect(200);
    expect(job.body.data).toEqual({
      id: first.body.data.job_id,
      status: 'queued',
      operation: 'merge',
      progress: 0,
      created_at: expect.any(String),
    });
    const queued = await Job.fromId<JobPayload>(gw.queue, first.body.data.job_id);
    expect(queued?.data.inputs.map((i) => i.url)).toEqual([video, audio]);
    expect(queued?.data.inputs[0].headers).toEqual({ referer: origin.url('/split.html') });
  });

  test('a pair of one progressive file and one HLS stream of the same item is refused', async () => {
    const mixed = await extract('/mixed.html');
    expect(mixed.media).toHaveLength(1);
    const sources: { url: string; stream_profile: string; has_video?: boolean }[] = mixed.media[0].sources;
    const video = sources.find((s) => s.stream_profile === 'video_only')!;
    const hlsAudio = sources.find((s) => s.stream_profile === 'hls' && s.has_video === false)!;
    const res = await download({ video_url: video.url, audio_url: hlsAudio.url });
    expectError(res, 400, 'invalid_merge_pair');
    expect(res.body.error.message).toMatch(/not one of each/);
  });

  test('HLS variants and conversions are jobs with the right operation', async () => {
    const hls = await extract('/media/master.m3u8');
    const variant = hls.media[0].sources.find((s: { has_video?: boolean }) => s.has_video).url;
    const audio = hls.media[0].sources.find((s: { has_video?: boolean }) => s.has_video === false).url;
    const remux = await download({ url: variant }).expect(202);
    expect((await request(gw.app).get(`/api/v1/jobs/${remux.body.data.job_id}`)).body.data.operation).toBe('remux');
    const pair = await download({ video_url: variant, audio_url: audio }).expect(202);
    expect((await request(gw.app).get(`/api/v1/jobs/${pair.body.data.job_id}`)).body.data.operation).toBe('remux');
    const page = await extract('/page.html');
    const convert = await download({ url: page.media[0].sources[0].url, format: 'mp3' }).expect(202);
    expect((await request(gw.app).get(`/api/v1/jobs/${convert.body.data.job_id}`)).body.data.operation).toBe('convert');
  });

  test("DASH representations sharing an id are a pair whose job names each one's id and kind", async () => {
    const dash = await extract('/media/shared.mpd');
    const manifest = origin.url('/media/shared.mpd');
    const sources: { url: string }[] = dash.media[0].sources;
    const urls = sources.map((s) => s.url);
    expect(urls).toHaveLength(7);
    expect(urls).toEqual(
      expect.arrayContaining([
        `${manifest}#representation=318597&type=audio`,
        `${manifest}#representation=318597&type=video`,
      ]),
    );
    const pair = await download({
      video_url: `${manifest}#representation=318597&type=video`,
      audio_url: `${manifest}#representation=318597&type=audio`,
    }).expect(202);
    const queued = await Job.fromId<JobPayload>(gw.queue, pair.body.data.job_id);
    expect(queued?.data.inputs.map((i) => [i.url, i.representation, i.representation_type])).toEqual([
      [manifest, '318597', 'video'],
      [manifest, '318597', 'audio'],
    ]);
  });
});

describe('jobs and artifacts', () => {
  test.each(['nope', 'a'.repeat(22), '../../etc/passwd', 'x'.repeat(200), 'AAAAAAAAAAAAAAAAAAAAA:'])(
    'job id %s is job_not_found',
    async (id) => {
      expectError(await request(gw.app).get(`/api/v1/jobs/${encodeURIComponent(id)}`), 404, 'job_not_found');
      expectError(await request(gw.app).get(`/api/v1/jobs/${encodeURIComponent(id)}/artifact`), 404, 'job_not_found');
    },
  );

  test('an artifact is 409 while its job is queued, served with Range once completed, and 410 once expired', async () => {
    const page = await extract('/page.html');
    const queued = await download({ url: page.media[0].sources[0].url, format: 'webm' }).expect(202);
    expectError(
      await request(gw.app).get(`/api/v1/jobs/${queued.body.data.job_id}/artifact`),
      409,
      'artifact_not_ready',
    );

    // Finish jobs with a stand-in processor (the real worker has its own tests): it stores an
    // artifact, live for the webm job and already expired for the mkv one.
    const expiredJob = await download({ url: page.media[0].sources[0].url, format: 'mkv' }).expect(202);
    const connection = await testRedis();
    // BullMQ's close() leaves connections it was given open: this one is quit below.
    const workerConnection = duplicateRedis(connection, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
      commandTimeout: undefined,
    });
    const worker = new Worker<JobPayload, JobResult>(
      DOWNLOAD_QUEUE,
      async (job) => {
        const expired = job.data.format === 'mkv';
        const dir = await artifacts.makeTempDir(job.id!);
        const file = path.join(dir, 'out');
        fs.copyFileSync(media.muxedMp4, file);
        const meta = await artifacts.put(job.id!, file, {
          filename: `${job.data.basename}.${job.data.format}`,
          content_type: 'video/webm',
          expires_at: Date.now() + (expired ? -1000 : 60_000),
        });
        return {
          filename: meta.filename,
          content_type: meta.content_type,
          size: meta.size,
          expires_at: meta.expires_at,
        };
      },
      { connection: workerConnection, prefix },
    );
    try {
      const waitFor = async (id: string, status: string) => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const view = (await request(gw.app).get(`/api/v1/jobs/${id}`)).body.data;
          if (view.status === status || Date.now() > deadline) return view;
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const done = await waitFor(queued.body.data.job_id, 'completed');
      expect(done).toMatchObject({
        status: 'completed',
        progress: 100,
        artifact: {
          url: `/api/v1/jobs/${queued.body.data.job_id}/artifact`,
          filename: 'Café clip 1.webm',
          content_type: 'video/webm',
          size: fs.statSync(media.muxedMp4).size,
        },
      });
      expect(done.finished_at).toEqual(expect.any(String));
      const file = await request(gw.app).get(done.artifact.url).buffer(true).parse(binary).expect(200);
      expect(sha256(file.body as Buffer)).toBe(sha256(fs.readFileSync(media.muxedMp4)));
      expect(file.headers['content-disposition']).toContain(`filename*=UTF-8''Caf%C3%A9%20clip%201.webm`);
      const part = await request(gw.app)
        .get(done.artifact.url)
        .set('range', 'bytes=0-9')
        .buffer(true)
        .parse(binary)
        .expect(206);
      expect((part.body as Buffer).length).toBe(10);

      const expired = await waitFor(expiredJob.body.data.job_id, 'expired');
      expect(expired.status).toBe('expired');
      expectError(
        await request(gw.app).get(`/api/v1/jobs/${expiredJob.body.data.job_id}/artifact`),
        410,
        'artifact_expired',
      );
      // The same request after expiry starts a new job rather than returning the expired one.
      const fresh = await download({ url: page.media[0].sources[0].url, format: 'mkv' }).expect(202);
      expect(fresh.body.data.job_id).not.toBe(expiredJob.body.data.job_id);
    } finally {
      await worker.close();
      await workerConnection.quit();
      await connection.quit();
    }
  });
});
