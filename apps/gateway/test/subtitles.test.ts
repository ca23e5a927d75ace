// Subtitles end to end: tracks found on a page and in an HLS master, downloaded as they are, converted
// or joined by a real worker, and embedded in mp4 (mov_text), mkv and webm (WebVTT) as ffprobe sees
// them. Every fetch goes to the local origin, the gateway's through its egress guard, the worker's
// through its job proxy.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { probe } from '@reelay/media';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { binary, buildGateway, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-subtitles-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-subtitles-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;

const EN_VTT =
  'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello there\n\n00:00:01.000 --> 00:00:02.000\nGeneral greeting\n';
const FR_SRT = '1\n00:00:00,000 --> 00:00:01,000\nBonjour\n\n2\n00:00:01,000 --> 00:00:02,000\nSalut\n';
const segment = (start: string, end: string, text: string) =>
  `WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n\n${start} --> ${end}\n${text}\n`;
const subPlaylist = (lang: string) =>
  [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    '#EXT-X-TARGETDURATION:1',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    '#EXTINF:1.0,',
    `${lang}0.vtt`,
    '#EXTINF:1.0,',
    `${lang}1.vtt`,
    '#EXT-X-ENDLIST',
    '',
  ].join('\n');
const MASTER = [
  '#EXTM3U',
  '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="subs/en.m3u8"',
  '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Deutsch",LANGUAGE="de",URI="subs/de.m3u8"',
  '#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=320x240,CODECS="avc1.4d401e,mp4a.40.2",SUBTITLES="subs"',
  'index.m3u8',
  '',
].join('\n');
const PAGE = `<!doctype html><html><head><title>Tracked clip</title></head><body>
  <video controls><source src="/media/muxed.mp4" type="video/mp4">
    <track kind="subtitles" src="/subs/en.vtt" srclang="en" label="English">
    <track kind="captions" src="/subs/fr.srt" srclang="fr" label="Français">
    <track kind="subtitles" src="/subs/ja.ttml" srclang="ja" type="application/ttml+xml">
  </video>
  <audio src="/media/audio.m4a"></audio></body></html>`;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/muxed.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/audio.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.body('/subs/en.vtt', EN_VTT, 'text/vtt');
  origin.body('/subs/fr.srt', FR_SRT, 'application/x-subrip');
  origin.body(
    '/subs/ja.ttml',
    '<tt xmlns="http://www.w3.org/ns/ttml"><body><div><p begin="0s" end="1s">こんにちは</p></div></body></tt>',
    'application/ttml+xml',
  );
  origin.body('/page', PAGE, 'text/html');
  origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.body(
    '/split',
    `<!doctype html><html><head><title>Split</title></head><body><video>
    <source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"'><source src="/media/audio.m4a" type='audio/mp4; codecs="mp4a.40.2"'>
    <track src="/subs/en.vtt" srclang="en"></video></body></html>`,
    'text/html',
  );
  // A track that later redirects to a private address: the guard refuses the hop before connecting.
  origin.redirect('/subs/moved.vtt', 'http://10.255.255.1/internal.vtt');
  origin.body(
    '/moved',
    '<!doctype html><title>Moved</title><video src="/media/muxed.mp4"><track src="/subs/moved.vtt" srclang="en"></video>',
    'text/html',
  );
  for (const name of fs.readdirSync(media.hlsDir)) {
    origin.file(
      `/hls/${name}`,
      path.join(media.hlsDir, name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  }
  origin.body('/hls/master.m3u8', MASTER, 'application/vnd.apple.mpegurl');
  // The test DASH rendition with two sidecar text adaptation sets, as packagers write them.
  for (const name of fs.readdirSync(media.dashDir)) {
    if (name !== 'manifest.mpd') origin.file(`/dash/${name}`, path.join(media.dashDir, name), 'video/mp4');
  }
  const text = (lang: string, mime: string, file: string) =>
    `<AdaptationSet contentType="text" mimeType="${mime}" lang="${lang}"><Representation id="sub-${lang}" bandwidth="256"><BaseURL>${file}</BaseURL></Representation></AdaptationSet>`;
  const sets = [
    text('en', 'text/vtt', 'subs/en.vtt'),
    text('fr', 'application/x-subrip', 'subs/fr.srt'),
    text('ja', 'application/ttml+xml', 'subs/ja.ttml'),
  ];
  const mpd = fs
    .readFileSync(path.join(media.dashDir, 'manifest.mpd'), 'utf8')
    .replace('</Period>', `${sets.join('')}</Period>`);
  origin.body('/dash/manifest.mpd', mpd, 'application/dash+xml');
  origin.body('/dash/subs/en.vtt', EN_VTT, 'text/vtt');
  origin.body('/dash/subs/fr.srt', FR_SRT, 'application/x-subrip');
  origin.body(
    '/dash/subs/ja.ttml',
    '<tt xmlns="http://www.w3.org/ns/ttml"><body><div><p begin="0s" end="1s">x</p></div></body></tt>',
    'application/ttml+xml',
  );
  for (const [lang, first, second] of [
    ['en', 'One', 'Two'],
    ['de', 'Eins', 'Zwei'],
  ]) {
    origin.body(`/hls/subs/${lang}.m3u8`, subPlaylist(lang), 'application/vnd.apple.mpegurl');
    origin.body(`/hls/subs/${lang}0.vtt`, segment('00:00:00.000', '00:00:00.900', first), 'text/vtt');
    origin.body(`/hls/subs/${lang}1.vtt`, segment('00:00:01.000', '00:00:01.900', second), 'text/vtt');
  }
  gw = await buildGateway({ env: { DATA_DIR: dataDir }, deps: { artifacts, queuePrefix: prefix } });
  const config = parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    WORKER_CONCURRENCY: '1',
  });
  worker = await startWorker({
    config,
    logger: createLogger({ name: 'subtitles-worker', level: 'silent' }),
    metricsPort: 0,
    prefix,
    dataDir,
  });
});

afterAll(async () => {
  await worker?.stop();
  await gw?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

type Job = {
  status: string;
  operation: string;
  error?: unknown;
  artifact: { url: string; filename: string; content_type: string };
};
type Item = {
  sources: { url: string; stream_profile: string }[];
  subtitles?: { language: string; url: string; format: string; label?: string }[];
};

async function extract(p: string): Promise<Item[]> {
  const res = await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: origin.url(p) })
    .expect(200);
  return res.body.data.media;
}

const download = (body: Record<string, unknown>) => request(gw.app).post('/api/v1/download').send(body);

/** Follows a 202 to its finished job and returns the artifact's bytes, its job and a local copy. */
async function finished(
  body: Record<string, unknown>,
  ext: string,
): Promise<{ job: Job; bytes: Buffer; file: string }> {
  const queued = await download(body).expect(202);
  const statusUrl = queued.body.data.status_url as string;
  const deadline = Date.now() + 30_000;
  let job = queued.body.data as Job;
  while (job.status !== 'completed' && job.status !== 'failed' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await request(gw.app).get(statusUrl).expect(200)).body.data;
  }
  if (job.status !== 'completed') throw new Error(`job ended ${job.status}: ${JSON.stringify(job.error)}`);
  const res = await request(gw.app).get(job.artifact.url).buffer(true).parse(binary).expect(200);
  const file = path.join(dataDir, `check-${randomBytes(4).toString('hex')}.${ext}`);
  fs.writeFileSync(file, res.body as Buffer);
  return { job, bytes: res.body as Buffer, file };
}

const subtitleStreams = async (file: string) => (await probe(file)).streams.map((s) => [s.type, s.codec]);
/** The language tag of each subtitle stream, as ffprobe reads it. */
function languages(file: string): string[] {
  const out = JSON.parse(
    execFileSync(
      process.env.FFPROBE_PATH || 'ffprobe',
      ['-v', 'error', '-show_entries', 'stream=codec_type:stream_tags=language', '-of', 'json', file],
      { encoding: 'utf8' },
    ),
  ) as {
    streams: { codec_type: string; tags?: Record<string, string> }[];
  };
  return out.streams.filter((s) => s.codec_type === 'subtitle').map((s) => s.tags?.language ?? '');
}

describe('a page with <track> elements', () => {
  test('the extract lists each subtitles or captions track with its language, label and format', async () => {
    const [video] = await extract('/page');
    expect(video.subtitles).toEqual([
      { language: 'en', label: 'English', url: origin.url('/subs/en.vtt'), format: 'vtt' },
      { language: 'fr', label: 'Français', url: origin.url('/subs/fr.srt'), format: 'srt' },
      { language: 'ja', url: origin.url('/subs/ja.ttml'), format: 'ttml' },
    ]);
  });

  test('a vtt track downloads as it is, streamed, named after the title and language', async () => {
    await extract('/page');
    const res = await download({ url: origin.url('/subs/en.vtt') })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/vtt/);
    expect(res.headers['content-disposition']).toContain('Tracked clip.en.vtt');
    expect((res.body as Buffer).toString('utf8')).toBe(EN_VTT);
  });

  test('an srt track asked as vtt, and a vtt track asked as srt, are converted by a job', async () => {
    await extract('/page');
    const vtt = await finished({ url: origin.url('/subs/fr.srt'), format: 'vtt' }, 'vtt');
    expect(vtt.job).toMatchObject({
      operation: 'convert',
      artifact: { filename: 'Tracked clip.fr.vtt', content_type: 'text/vtt' },
    });
    expect(vtt.bytes.toString('utf8')).toMatch(
      /^WEBVTT\s+(?:00:)?00:00\.000 --> (?:00:)?00:01\.000\nBonjour\s+(?:00:)?00:01\.000 --> (?:00:)?00:02\.000\nSalut/,
    );
    const srt = await finished({ url: origin.url('/subs/en.vtt'), format: 'srt' }, 'srt');
    expect(srt.job.artifact).toMatchObject({ filename: 'Tracked clip.en.srt', content_type: 'application/x-subrip' });
    expect(srt.bytes.toString('utf8')).toMatch(
      /^1\r?\n00:00:00,000 --> 00:00:01,000\r?\nHello there[\s\S]*General greeting/,
    );
  });

  test('a TTML track downloads as it is but is not converted', async () => {
    await extract('/page');
    await download({ url: origin.url('/subs/ja.ttml') }).expect(200);
    const res = await download({ url: origin.url('/subs/ja.ttml'), format: 'vtt' }).expect(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/TTML/) });
  });

  test('subtitles embedded in mp4 are mov_text tracks tagged with ISO 639-2 languages beside the video and audio', async () => {
    const [video] = await extract('/page');
    const { job, file } = await finished({ url: video.sources[0].url, format: 'mp4', subtitles: ['en', 'fr'] }, 'mp4');
    expect(job).toMatchObject({ operation: 'convert', artifact: { content_type: 'video/mp4' } });
    expect(await subtitleStreams(file)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
      ['subtitle', 'mov_text'],
      ['subtitle', 'mov_text'],
    ]);
    expect(languages(file)).toEqual(['eng', 'fre']);
  });

  test('subtitles embedded in webm are WebVTT tracks', async () => {
    const [video] = await extract('/page');
    const { file } = await finished({ url: video.sources[0].url, format: 'webm', subtitles: ['fr'] }, 'webm');
    expect(await subtitleStreams(file)).toEqual([
      ['video', 'vp9'],
      ['audio', 'opus'],
      ['subtitle', 'webvtt'],
    ]);
    expect(languages(file)).toEqual(['fre']);
  });

  test('without a format, a file whose codecs are unknown becomes mkv with its streams copied', async () => {
    const [video] = await extract('/page');
    const { job, file } = await finished({ url: video.sources[0].url, subtitles: ['en'] }, 'mkv');
    expect(job.artifact).toMatchObject({ filename: 'Tracked clip.mkv', content_type: 'video/x-matroska' });
    expect(await subtitleStreams(file)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
      ['subtitle', 'webvtt'],
    ]);
  });

  test('the languages are part of the request: other languages make another job, the same ones the same job', async () => {
    const [video] = await extract('/page');
    const one = await download({ url: video.sources[0].url, format: 'mkv', subtitles: ['en'] }).expect(202);
    const same = await download({ url: video.sources[0].url, format: 'mkv', subtitles: ['en'] }).expect(202);
    const other = await download({ url: video.sources[0].url, format: 'mkv', subtitles: ['fr'] }).expect(202);
    expect(same.body.data.job_id).toBe(one.body.data.job_id);
    expect(other.body.data.job_id).not.toBe(one.body.data.job_id);
  });
});

describe('a merge pair', () => {
  test("the video and audio members are merged with the item's track embedded as mov_text", async () => {
    const [item] = await extract('/split');
    const video = item.sources.find((s) => s.stream_profile === 'video_only')!;
    const audio = item.sources.find((s) => s.stream_profile === 'audio_only')!;
    const { job, file } = await finished({ video_url: video.url, audio_url: audio.url, subtitles: ['en'] }, 'mp4');
    expect(job).toMatchObject({ operation: 'merge', artifact: { filename: 'Split.mp4' } });
    expect(await subtitleStreams(file)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
      ['subtitle', 'mov_text'],
    ]);
    expect(languages(file)).toEqual(['eng']);
  });
});

describe('an HLS master with subtitle renditions', () => {
  test('each rendition is an hls track, joined by a job into one WebVTT file', async () => {
    const [item] = await extract('/hls/master.m3u8');
    expect(item.subtitles?.map((s) => [s.language, s.format, s.label])).toEqual([
      ['en', 'hls', 'English'],
      ['de', 'hls', 'Deutsch'],
    ]);
    const { job, bytes } = await finished({ url: item.subtitles![1].url }, 'vtt');
    expect(job).toMatchObject({ operation: 'remux', artifact: { content_type: 'text/vtt' } });
    expect(bytes.toString('utf8')).toMatch(/^WEBVTT[\s\S]*Eins[\s\S]*Zwei/);
  });

  test('the HLS video remuxed to mkv carries the HLS subtitle track as WebVTT with its language', async () => {
    const [item] = await extract('/hls/master.m3u8');
    const { file } = await finished({ url: item.sources[0].url, format: 'mkv', subtitles: ['de'] }, 'mkv');
    expect(await subtitleStreams(file)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
      ['subtitle', 'webvtt'],
    ]);
    expect(languages(file)).toEqual(['ger']);
  });
});

describe('a DASH manifest with text adaptation sets', () => {
  // ffmpeg's DASH demuxer would open the text sets too and fail on them (a TTML file it cannot read):
  // the job proxy hands it the manifest without them.
  test('its sidecar tracks are listed, and embedded in the remux of its video and audio representations', async () => {
    const [item] = await extract('/dash/manifest.mpd');
    expect(item.subtitles).toEqual([
      { language: 'en', url: origin.url('/dash/subs/en.vtt'), format: 'vtt' },
      { language: 'fr', url: origin.url('/dash/subs/fr.srt'), format: 'srt' },
      { language: 'ja', url: origin.url('/dash/subs/ja.ttml'), format: 'ttml' },
    ]);
    const video = item.sources.find((s) => s.url.endsWith('#representation=0'))!;
    const audio = item.sources.find((s) => s.url.endsWith('#representation=1'))!;
    const { job, file } = await finished(
      { video_url: video.url, audio_url: audio.url, format: 'mkv', subtitles: ['fr', 'en'] },
      'mkv',
    );
    expect(job).toMatchObject({ operation: 'remux' });
    expect(await subtitleStreams(file)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
      ['subtitle', 'webvtt'],
      ['subtitle', 'webvtt'],
    ]);
    expect(languages(file)).toEqual(['fre', 'eng']);
  });
});

describe('requests that cannot be met', () => {
  test('subtitles for an audio format, an audio source, or a language the item lacks are invalid_request, saying why', async () => {
    const [video, audio] = await extract('/page');
    const asMp3 = await download({ url: video.sources[0].url, format: 'mp3', subtitles: ['en'] }).expect(400);
    expect(asMp3.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/mp4, webm or mkv/),
    });
    const onAudio = await download({ url: audio.sources[0].url, subtitles: ['en'] }).expect(400);
    expect(onAudio.body.error.message).toMatch(/no video/);
    const missing = await download({ url: video.sources[0].url, subtitles: ['es'] }).expect(400);
    expect(missing.body.error).toMatchObject({
      code: 'invalid_request',
      message: 'This media item has no subtitles in "es"; it has: en, fr, ja.',
    });
    const ttml = await download({ url: video.sources[0].url, subtitles: ['ja'] }).expect(400);
    expect(ttml.body.error.message).toMatch(/TTML/);
  });

  test('a clip cannot embed subtitles (their timeline would drift from the cut), and a track cannot be clipped', async () => {
    const [video] = await extract('/page');
    const clipped = await download({
      url: video.sources[0].url,
      format: 'mkv',
      subtitles: ['en'],
      clip: { start: 0.5, end: 1.5 },
    }).expect(400);
    expect(clipped.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/clip cannot embed subtitles/),
    });
    const track = await download({ url: video.subtitles![0].url, clip: { start: 0.5, end: 1.5 } }).expect(400);
    expect(track.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/cannot be clipped/),
    });
  });

  test('a track that redirects to a private address is refused by the guard, streamed or fetched by a job', async () => {
    await extract('/moved');
    const direct = await download({ url: origin.url('/subs/moved.vtt') }).expect(403);
    expect(direct.body.error.code).toBe('url_blocked');
    const queued = await download({ url: origin.url('/subs/moved.vtt'), format: 'srt' }).expect(202);
    const deadline = Date.now() + 30_000;
    let job = queued.body.data as Job;
    while (job.status !== 'failed' && job.status !== 'completed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await request(gw.app).get(queued.body.data.status_url).expect(200)).body.data;
    }
    expect(job).toMatchObject({ status: 'failed', error: { code: 'url_blocked' } });
  });

  test('malformed languages, repeated or too many are refused before anything is looked up', async () => {
    for (const subtitles of [
      ['en', 'en'],
      ['<script>'],
      [''],
      ['x'.repeat(36)],
      Array.from({ length: 9 }, (_, i) => `l${i}`),
      'en',
      [],
    ]) {
      const res = await download({ url: origin.url('/media/muxed.mp4'), subtitles }).expect(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });

  test('a subtitle URL no extract returned is unknown_source; a subtitle asked as video, or media asked as vtt, is invalid_request', async () => {
    const [video] = await extract('/page');
    expect((await download({ url: origin.url('/subs/other.vtt') }).expect(400)).body.error.code).toBe('unknown_source');
    expect((await download({ url: origin.url('/subs/en.vtt'), format: 'mp4' }).expect(400)).body.error.message).toMatch(
      /vtt or srt/,
    );
    expect((await download({ url: origin.url('/subs/en.vtt'), subtitles: ['en'] }).expect(400)).body.error.code).toBe(
      'invalid_request',
    );
    expect((await download({ url: video.sources[0].url, format: 'srt' }).expect(400)).body.error.message).toMatch(
      /subtitle format/,
    );
  });
});
