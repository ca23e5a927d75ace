// Clips, tags and cover art at request time: what POST /api/v1/download accepts, refuses (with the
// error envelope), puts in the job and counts as the same request. Sources are recorded directly, as
// an extract would, with what the extract knew (duration, thumbnail, author, upload date).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Job, Queue } from 'bullmq';
import { DOWNLOAD_QUEUE, type JobPayload, type SourceRecord } from '@reelay/contracts';
import { SourceRegistry } from '@reelay/sources';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let queue: Queue;
const prefix = `test-clip-${randomBytes(4).toString('hex')}`;
const base = 'http://127.0.0.1:9/media';

const record = (name: string, extra: Partial<SourceRecord> = {}): SourceRecord => ({
  url: `${base}/${name}`,
  stream_profile: 'muxed_progressive',
  media_index: 0,
  media_type: 'video',
  title: 'A talk',
  ext: 'mp4',
  ...extra,
});

beforeAll(async () => {
  gw = await buildGateway({ deps: { queuePrefix: prefix } });
  queue = new Queue(DOWNLOAD_QUEUE, { connection: gw.redis, prefix });
  const sources = new SourceRegistry(gw.redis, 600);
  await sources.record('generic', [
    record('known.mp4', {
      duration: 6,
      thumbnail: `${base}/thumb.png`,
      author: 'Ada',
      upload_date: '2024-05-06',
      page_url: 'https://example.com/talk',
    }),
    record('unknown.mp4'),
    record('still.png', { stream_profile: 'image', media_type: 'image', ext: 'png' }),
    record('odd.mov', { ext: 'mov' }),
    record('unfit.mp4', {
      title: 'T'.repeat(900),
      thumbnail: `data:image/png;base64,${'A'.repeat(100)}`,
      page_url: `https://example.com/${'p'.repeat(3000)}`,
      author: 'A'.repeat(900),
    }),
  ]);
});

afterAll(async () => {
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await gw.close();
});

const post = (body: object) => request(gw.app).post('/api/v1/download').send(body);

async function payloadOf(res: request.Response): Promise<JobPayload> {
  expect(res.status).toBe(202);
  const job = await Job.fromId<JobPayload>(queue, res.body.data.job_id);
  return job!.data;
}

describe('a clip at request time', () => {
  test("of a progressive source always makes a job, in the source's own format, with the clip resolved to the millisecond", async () => {
    const payload = await payloadOf(await post({ url: `${base}/known.mp4`, clip: { start: 1.23456, end: 3 } }));
    expect(payload).toMatchObject({
      operation: 'convert',
      format: 'mp4',
      clip: { start: 1.235, end: 3, mode: 'fast' },
      duration: 6,
    });
    const view = await request(gw.app).get(`/api/v1/jobs/${payload.id}`);
    expect(view.body.data.clip).toEqual({ start: 1.235, end: 3, mode: 'fast', method: 'copy' });
  });

  test('with an end past the known end of the media is cut there', async () => {
    const payload = await payloadOf(
      await post({ url: `${base}/known.mp4`, clip: { start: 4, end: 60, mode: 'precise' } }),
    );
    expect(payload.clip).toEqual({ start: 4, end: 6, mode: 'precise' });
  });

  test('starting at or past the known end is 400 invalid_clip', async () => {
    for (const start of [6, 7.5]) {
      const res = await post({ url: `${base}/known.mp4`, clip: { start, end: start + 1 } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: { code: 'invalid_clip', message: expect.stringContaining('past the end') },
      });
    }
  });

  test('starting past an unknown end is accepted: the job finds out', async () => {
    const payload = await payloadOf(await post({ url: `${base}/unknown.mp4`, clip: { start: 500, end: 501 } }));
    expect(payload.clip).toEqual({ start: 500, end: 501, mode: 'fast' });
    expect(payload.duration).toBeUndefined();
  });

  test.each([
    [{ start: 3, end: 3 }, 'invalid_clip'],
    [{ start: 3, end: 2 }, 'invalid_clip'],
    [{ start: 1, end: 1.0004 }, 'invalid_clip'], // equal once rounded to the millisecond
    [{ start: -1, end: 2 }, 'invalid_clip'],
    [{ start: 0, end: 1e12 }, 'invalid_clip'],
    [{ start: 0, end: 86_401 }, 'invalid_clip'],
    [{ start: '1', end: 2 }, 'invalid_request'],
    [{ start: 1 }, 'invalid_request'],
    [{ start: 0, end: 2, mode: 'exact' }, 'invalid_request'],
    [{ start: 0, end: 2, extra: true }, 'invalid_request'],
    [[0, 2], 'invalid_request'],
    [null, 'invalid_request'],
  ])('%j is 400 %s with the error envelope', async (clip, code) => {
    const res = await post({ url: `${base}/known.mp4`, clip });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code, message: expect.any(String) } });
  });

  test('non-finite numbers cannot arrive as JSON and are refused as text', async () => {
    const res = await request(gw.app)
      .post('/api/v1/download')
      .set('content-type', 'application/json')
      .send(`{"url":"${base}/known.mp4","clip":{"start":NaN,"end":Infinity}}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  test('of an image is 400 invalid_request', async () => {
    const res = await post({ url: `${base}/still.png`, clip: { start: 0, end: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  test('of a source in a format reelay does not write gives mkv', async () => {
    const payload = await payloadOf(await post({ url: `${base}/odd.mov`, clip: { start: 0, end: 1 } }));
    expect(payload.format).toBe('mkv');
  });
});

describe('tags and cover in the job', () => {
  test('come from what the extract knew: title, author, upload date, page URL and thumbnail', async () => {
    const payload = await payloadOf(await post({ url: `${base}/known.mp4`, format: 'mp3' }));
    expect(payload.tags).toEqual({
      title: 'A talk',
      artist: 'Ada',
      date: '2024-05-06',
      comment: 'https://example.com/talk',
    });
    expect(payload.cover).toEqual({ url: `${base}/thumb.png` });
  });

  test('values that do not fit the job are cut or left out, never a failure', async () => {
    const payload = await payloadOf(await post({ url: `${base}/unfit.mp4`, format: 'mp3' }));
    expect(payload.tags).toEqual({ title: 'T'.repeat(500), artist: 'A'.repeat(500) });
    expect(payload.cover).toBeUndefined();
  });

  test('metadata:false and cover:false turn them off', async () => {
    const payload = await payloadOf(
      await post({ url: `${base}/known.mp4`, format: 'm4a', metadata: false, cover: false }),
    );
    expect(payload.tags).toBe(false);
    expect(payload.cover).toBeUndefined();
  });

  test('metadata and cover must be booleans', async () => {
    for (const body of [{ metadata: 'no' }, { cover: 0 }]) {
      const res = await post({ url: `${base}/known.mp4`, format: 'mp3', ...body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });
});

describe('the identity of a request', () => {
  test('the same clip is the same job; another clip, mode, metadata or cover choice is another', async () => {
    const body = { url: `${base}/known.mp4`, format: 'mp3', clip: { start: 1, end: 2 } };
    const first = (await post(body)).body.data.job_id;
    expect((await post({ ...body, clip: { start: 1, end: 2, mode: 'fast' } })).body.data.job_id).toBe(first);
    const others = await Promise.all([
      post({ ...body, clip: { start: 1, end: 2.5 } }),
      post({ ...body, clip: { start: 1, end: 2, mode: 'precise' } }),
      post({ ...body, metadata: false }),
      post({ ...body, cover: false }),
      post({ url: body.url, format: 'mp3' }),
    ]);
    const ids = others.map((r) => r.body.data.job_id);
    expect(new Set([first, ...ids]).size).toBe(6);
  });
});
