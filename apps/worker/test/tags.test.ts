// Tags and cover art end to end: each output format's tags read back with ffprobe in its container's
// convention, cover art in mp3, m4a and opus from a thumbnail fetched through the egress guard, and
// metadata:false dropping the inputs' tags. A cover that cannot be had leaves the job unharmed.
import fs from 'node:fs';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, type JobInput, type JobPayload, type OutputFormat } from '@reelay/contracts';
import { ffprobe, makeClipMedia, serveClipMedia, type Probed } from './clip-media.js';
import { payload, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('tags');
let store: FsArtifactStore;

beforeAll(async () => {
  store = new FsArtifactStore(stack.dataDir);
  serveClipMedia(stack.origin, await makeClipMedia(stack.dataDir));
  stack.origin.body('/c/huge.png', Buffer.alloc(6 * 1024 * 1024, 7), 'image/png');
});

const TAGS = {
  title: 'Café talk: part 1',
  artist: 'Ada Lovelace',
  date: '2024-05-06',
  comment: 'https://example.com/watch?v=1&t=2',
};
const muxed = (): JobInput[] => [
  { url: stack.origin.url('/c/muxed.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.64000c,mp4a.40.2' },
];
const job = (format: OutputFormat, extra: Partial<JobPayload> = {}) =>
  payload(muxed(), { operation: 'convert', format, duration: 6, tags: TAGS, ...extra });

async function run(job: JobPayload): Promise<Probed & { file: string }> {
  await stack.queue.add(job);
  const done = await stack.queue.finished(job.id, 40_000);
  if ((await done.getState()) !== 'completed')
    throw new Error(`job failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const file = (await store.get(job.id))!.path;
  return { ...ffprobe(file), file };
}

const cover = (info: Probed) => info.streams.filter((s) => s.disposition?.attached_pic === 1).map((s) => s.codec_name);

describe('tags', () => {
  test.each([
    ['mp4', {}, { title: TAGS.title, artist: TAGS.artist, date: TAGS.date, comment: TAGS.comment }],
    ['mkv', {}, { title: TAGS.title, ARTIST: TAGS.artist, DATE_RELEASED: TAGS.date, COMMENT: TAGS.comment }],
    // webm cannot hold H.264: a one-second clip keeps the VP9 encode small.
    [
      'webm',
      { clip: { start: 0, end: 1, mode: 'fast' } },
      { title: TAGS.title, ARTIST: TAGS.artist, DATE_RELEASED: TAGS.date, COMMENT: TAGS.comment },
    ],
  ] as const)("are written into %s in its convention, over the input's own", async (format, extra, expected) => {
    const info = await run(job(format, extra));
    expect(info.format.tags).toMatchObject(expected);
    expect(JSON.stringify(info.format.tags)).not.toContain('Original');
  });

  test("metadata:false writes none and drops the input's title and artist", async () => {
    const info = await run(job('mp4', { tags: false }));
    const tags = info.format.tags ?? {};
    expect(Object.keys(tags).filter((k) => !['major_brand', 'minor_version', 'compatible_brands'].includes(k))).toEqual(
      [],
    );
  });

  test("a job queued before tags keeps ffmpeg's default: the input's tags are copied", async () => {
    const info = await run(job('mkv', { tags: undefined }));
    expect(info.format.tags).toMatchObject({ title: 'Original title', ARTIST: 'Original artist' });
  });
});

describe('audio files with cover art', () => {
  const thumb = () => ({ url: stack.origin.url('/c/thumb.png') });

  test('an mp3 has ID3v2.4 tags and the thumbnail as a JPEG picture', async () => {
    const info = await run(job('mp3', { cover: thumb() }));
    expect(info.format.tags).toMatchObject(TAGS);
    expect(cover(info)).toEqual(['mjpeg']);
    expect(info.streams.find((s) => s.codec_type === 'audio')?.codec_name).toBe('mp3');
    const head = fs.readFileSync(info.file).subarray(0, 4);
    expect([head.subarray(0, 3).toString(), head[3]]).toEqual(['ID3', 4]);
  });

  test('an m4a has iTunes tags and the thumbnail as its cover atom', async () => {
    const info = await run(job('m4a', { cover: thumb() }));
    expect(info.format.tags).toMatchObject(TAGS);
    expect(cover(info)).toEqual(['mjpeg']);
  });

  test('an opus file has Vorbis comments and the thumbnail as a METADATA_BLOCK_PICTURE', async () => {
    const info = await run(job('opus', { cover: thumb() }));
    const audio = info.streams.find((s) => s.codec_type === 'audio')!;
    expect(audio.codec_name).toBe('opus');
    expect(audio.tags).toMatchObject(TAGS); // ogg keeps comments on the stream
    expect(cover(info)).toEqual(['mjpeg']); // ffmpeg's ogg demuxer shows the comment as a picture
  });

  test('an opus file without a cover still has its comments', async () => {
    const info = await run(job('opus'));
    expect(info.streams.find((s) => s.codec_type === 'audio')!.tags).toMatchObject(TAGS);
    expect(cover(info)).toEqual([]);
  });

  test.each([
    ['missing (404)', '/c/missing.png'],
    ['over 5 MB', '/c/huge.png'],
  ])('a thumbnail that is %s leaves the cover out and the job completes', async (_what, path) => {
    const info = await run(job('m4a', { cover: { url: stack.origin.url(path) } }));
    expect(cover(info)).toEqual([]);
    expect(info.format.tags).toMatchObject({ title: TAGS.title });
  });

  test('a thumbnail at a blocked address is refused by the egress guard and the job completes without it', async () => {
    // An address literal: the guard refuses it before any connection is attempted.
    const info = await run(job('mp3', { cover: { url: 'http://169.254.169.254/latest/thumb.jpg' } }));
    expect(cover(info)).toEqual([]);
  });
});
