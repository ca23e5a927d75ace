// Smart cut end to end: precise clips of each input kind (H.264, and HEVC as a file and HLS) run
// by a real worker through its egress proxy, checked frame by frame against the source (SSIM of
// every frame, the exact number of frames), decoded whole with no error, timestamps rising across
// the seam, the copied pictures byte for byte the source's, a white frame and its beep still
// together; sources that cannot be spliced are re-encoded whole; and chromium plays the result
// through the seam.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { chromium } from 'playwright-core';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, jobView, type JobInput, type JobPayload } from '@reelay/contracts';
import { describeWithTools } from '@reelay/testkit';
import {
  beepTimes,
  decodedAudio,
  decodeErrors,
  FLASHES,
  flashTimes,
  FPS,
  frameSsims,
  makeSmartMedia,
  pictureHashes,
  serveSmartMedia,
  ssim,
  videoPackets,
} from './smart-media.js';
import { payload, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('smartcut');
let store: FsArtifactStore;
let media: string;

beforeAll(async () => {
  store = new FsArtifactStore(stack.dataDir);
  media = await makeSmartMedia(stack.dataDir);
  serveSmartMedia(stack.origin, media);
}, 60_000);

const AVC = 'avc1.64000d';
const HVC = 'hvc1.1.6.L60.90';
const AAC = 'mp4a.40.2';
const input = (p: string, profile: JobInput['stream_profile'], extra: Partial<JobInput> = {}): JobInput => ({
  url: stack.origin.url(p),
  stream_profile: profile,
  ...extra,
});
const local = (...parts: string[]) => ['-protocol_whitelist', 'file', '-i', path.join(media, ...parts)];

async function run(job: JobPayload): Promise<{ file: string; method: string | undefined }> {
  await stack.queue.add(job);
  const done = await stack.queue.finished(job.id, 60_000);
  if ((await done.getState()) !== 'completed')
    throw new Error(`job failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const view = jobView(job.id, done, 'completed');
  return { file: (await store.get(job.id))!.path, method: view.clip?.method };
}

const CLIP = { start: 2.3, end: 5.5 }; // the head is 2.3–3.0 s (21 frames), the body 3.0–5.5 s
const AUDIO_FRAME = 1024 / 48_000;

// `file`: the source file of the same pictures, whose coded pictures the body must repeat.
const KINDS = [
  {
    kind: 'H.264 progressive file',
    codec: 'h264',
    file: 'muxed.mp4',
    inputs: () => [input('/s/muxed.mp4', 'muxed_progressive', { codecs: `${AVC},${AAC}` })],
    operation: 'convert',
    format: 'mp4',
    source: () => local('muxed.mp4'),
  },
  {
    kind: 'H.264 merge pair',
    codec: 'h264',
    file: 'muxed.mp4',
    inputs: () => [
      input('/s/video.mp4', 'video_only', { codecs: AVC }),
      input('/s/audio.m4a', 'audio_only', { codecs: AAC }),
    ],
    operation: 'merge',
    format: undefined,
    source: () => local('video.mp4'),
  },
  {
    kind: 'H.264 HLS stream',
    codec: 'h264',
    file: 'muxed.mp4',
    inputs: () => [input('/s/hls/index.m3u8', 'hls', { codecs: `${AVC},${AAC}` })],
    operation: 'remux',
    format: undefined,
    source: () => local('hls', 'index.m3u8'),
  },
  {
    kind: 'H.264 DASH pair',
    codec: 'h264',
    file: 'muxed.mp4',
    inputs: () => [
      input('/s/dash/manifest.mpd', 'dash', { representation: '0', codecs: AVC }),
      input('/s/dash/manifest.mpd', 'dash', { representation: '1', codecs: AAC }),
    ],
    operation: 'remux',
    format: undefined,
    source: () => local('dash', 'manifest.mpd'),
  },
  {
    kind: 'HEVC progressive file (into MP4, hev1)',
    codec: 'hevc',
    file: 'hevc.mp4',
    inputs: () => [input('/s/hevc.mp4', 'muxed_progressive', { codecs: `${HVC},${AAC}` })],
    operation: 'convert',
    format: 'mp4',
    source: () => local('hevc.mp4'),
  },
  {
    kind: 'HEVC HLS stream (into Matroska)',
    codec: 'hevc',
    file: 'hevc.mp4',
    inputs: () => [input('/s/hevc-hls/index.m3u8', 'hls', { codecs: `${HVC},${AAC}` })],
    operation: 'remux',
    format: 'mkv',
    source: () => local('hevc-hls', 'index.m3u8'),
  },
] as const;

let progressiveClip: string | undefined;
const sourceHashes: Record<string, { pts: number; hash: string }[]> = {};

describe.each(KINDS)(
  'a precise clip of an $kind',
  ({ kind, codec, file: sourceFile, inputs, operation, format, source }) => {
    test('is cut smart: exact frames at both ends, a clean seam, the copied pictures untouched, sound in sync', async () => {
      const { file, method } = await run(
        payload([...inputs()], { operation, format, duration: 7, clip: { ...CLIP, mode: 'precise' } }),
      );
      if (kind === KINDS[0].kind) progressiveClip = file;
      expect(method).toBe('smart');
      const length = CLIP.end - CLIP.start;

      // Decodes end to end without a single error; decode times rise across the seam, and the clip
      // starts at start and lasts end − start within 0.1 s.
      expect(decodeErrors(file)).toBe('');
      const packets = videoPackets(file);
      // (Matroska stores no decode times: ffprobe derives them, but not for the first few packets.)
      const decodeTimes = packets.map((p) => p.dts).filter((t) => Number.isFinite(t));
      expect(decodeTimes.length).toBeGreaterThan(packets.length - 5);
      for (let i = 1; i < decodeTimes.length; i++) expect(decodeTimes[i]).toBeGreaterThan(decodeTimes[i - 1]);
      const shown = packets.map((p) => p.pts).sort((a, b) => a - b);
      expect(shown[0]).toBeGreaterThanOrEqual(-0.001);
      // (Matroska starts every stream after the AAC encoder's priming: times count from t0.)
      expect(shown[0]).toBeLessThan(format === 'mkv' ? 0.05 : 1 / FPS);
      const t0 = shown[0];
      // Every frame of [start, end) and no other: the last one shown is the frame before end.
      expect(shown).toHaveLength(Math.round(length * FPS));
      expect(Math.abs(shown.at(-1)! - t0 - (length - 1 / FPS))).toBeLessThan(0.002);
      const { count, scores } = frameSsims(file, path.join(media, sourceFile), CLIP.start, CLIP.end);
      expect(count).toBe(Math.round(length * FPS));
      expect(scores).toHaveLength(count);
      expect(Math.min(...scores)).toBeGreaterThanOrEqual(0.95);

      // The first frame is the source's frame at start, the last the source's frame before end, each
      // far closer than the neighbouring frame (an accurate seek in the source, not the pairing above).
      const at = (t: number) => ['-ss', (t - 0.002).toFixed(3), ...source()];
      const first = ssim(['-i', file], at(CLIP.start));
      expect(first).toBeGreaterThanOrEqual(0.95);
      expect(ssim(['-i', file], at(CLIP.start + 1 / FPS))).toBeLessThan(first - 0.2);
      const lastOut = ['-ss', (shown.at(-1)! - 0.002).toFixed(3), '-i', file];
      const last = ssim(lastOut, at(CLIP.end - 1 / FPS));
      expect(last).toBeGreaterThanOrEqual(0.95);
      expect(ssim(lastOut, at(CLIP.end - 2 / FPS))).toBeLessThan(last - 0.2);

      // The body, from the output's second keyframe (the source's at 3.0 s) to the tail's (a keyframe
      // between the source's, if the end needs one), is the source's pictures byte for byte; only the
      // head (before it) and the tail (a few frames before end) were encoded.
      const seam = packets.findIndex((p, i) => i > 0 && p.key);
      expect(packets[seam].pts - t0).toBeCloseTo(3.0 - CLIP.start, 2);
      const offGrid = (t: number) => Math.abs(t - t0 + CLIP.start - Math.round(t - t0 + CLIP.start)) > 0.01;
      const tailAt = packets.findIndex((p, i) => i > seam && p.key && offGrid(p.pts));
      const tailLength = tailAt < 0 ? 0 : packets.length - tailAt;
      expect(tailLength).toBeLessThanOrEqual(4);
      const out = pictureHashes(file, codec);
      sourceHashes[codec] ??= pictureHashes(path.join(media, sourceFile), codec);
      const src = sourceHashes[codec];
      const body = out.slice(seam, out.length - tailLength).map((p) => p.hash);
      const from = src.findIndex((p) => p.hash === body[0]);
      expect(src[from].pts).toBeCloseTo(3.0, 3);
      expect(body.length).toBeGreaterThan(70);
      expect(src.slice(from, from + body.length).map((p) => p.hash)).toEqual(body);
      const encoded = [...out.slice(0, seam), ...out.slice(out.length - tailLength)];
      expect(encoded.every((p) => !src.some((s) => s.hash === p.hash))).toBe(true);

      // A white frame in the head and one in the body, each with its beep, as far apart as in the
      // source rendition (DASH's own audio is a frame late: its segments drop the AAC priming edit)
      // within one audio frame, and nothing else audible between.
      // (The source is read whole: after a seek, ffmpeg's DASH demuxer repeats a second of audio.)
      const flashes = flashTimes(['-i', file]);
      const beeps = beepTimes(['-i', file]).filter((t) => t < length - 0.05); // silence also "ends" at the end of the file
      const sourceFlashes = flashTimes(source());
      const sourceBeeps = beepTimes(
        source().map((a) => (a.endsWith('video.mp4') ? a.replace('video.mp4', 'muxed.mp4') : a)),
      ).filter((t) => t < 6.9);
      expect(sourceBeeps).toHaveLength(2);
      expect(flashes).toHaveLength(2);
      expect(beeps).toHaveLength(2);
      FLASHES.forEach((t, i) => {
        expect(Math.abs(flashes[i] - t0 - (t - CLIP.start))).toBeLessThan(0.5 / FPS);
        const drift = beeps[i] - flashes[i] - (sourceBeeps[i] - sourceFlashes[i]);
        expect(Math.abs(drift)).toBeLessThanOrEqual(AUDIO_FRAME);
        expect(Math.abs(beeps[i] - flashes[i])).toBeLessThanOrEqual(2 * AUDIO_FRAME);
      });
    });
  },
);

test("AAC into MP4 is copied, not encoded: decoded, the clip's sound is the source's from start, sample for sample", async () => {
  const file =
    progressiveClip ??
    (
      await run(
        payload([...KINDS[0].inputs()], {
          operation: 'convert',
          format: 'mp4',
          duration: 7,
          clip: { ...CLIP, mode: 'precise' },
        }),
      )
    ).file;
  const clip = decodedAudio(['-i', file]);
  const source = decodedAudio(local('muxed.mp4'), `atrim=start=${CLIP.start}:end=${CLIP.end}`);
  // Ends with the last AAC frame begun before end: at most one frame (1,024 samples, 2 bytes each) more.
  expect(clip.length).toBeGreaterThanOrEqual(source.length);
  expect(clip.length - source.length).toBeLessThanOrEqual(1024 * 2);
  // An encode would change every sample; the copy, with the frame before start decoded and dropped
  // by the edit list, gives the source's exactly (a frame off would differ too).
  expect(clip.subarray(0, source.length).equals(source)).toBe(true);
});

describe('sources that cannot be spliced', () => {
  test('a VP9 source is re-encoded whole, exact, and says so', async () => {
    const { file, method } = await run(
      payload([input('/s/vp9.webm', 'muxed_progressive', { codecs: 'vp9,opus' })], {
        operation: 'convert',
        format: 'mkv',
        duration: 4,
        clip: { start: 1.1, end: 2.9, mode: 'precise' },
      }),
    );
    expect(method).toBe('reencode');
    expect(decodeErrors(file)).toBe('');
    const shown = videoPackets(file)
      .map((p) => p.pts)
      .sort((a, b) => a - b);
    expect(shown[0]).toBeLessThan(0.05); // Matroska starts the video after the AAC priming
    expect(Math.abs(shown.at(-1)! + 1 / 25 - 1.8)).toBeLessThan(0.1);
    expect(ssim(['-i', file], ['-ss', '1.098', ...local('vp9.webm')])).toBeGreaterThanOrEqual(0.95);
  });

  test('a source with one keyframe for the whole file is re-encoded whole (the head would be the clip)', async () => {
    const { file, method } = await run(
      payload([input('/s/sparse.mp4', 'muxed_progressive', { codecs: `${AVC},${AAC}` })], {
        operation: 'convert',
        format: 'mp4',
        duration: 6,
        clip: { start: 1.5, end: 4.5, mode: 'precise' },
      }),
    );
    expect(method).toBe('reencode');
    expect(decodeErrors(file)).toBe('');
    const shown = videoPackets(file)
      .map((p) => p.pts)
      .sort((a, b) => a - b);
    expect(Math.abs(shown.at(-1)! + 1 / 25 - 3)).toBeLessThan(0.1);
  });

  test('a fast clip shows method copy', async () => {
    const { method } = await run(
      payload([input('/s/muxed.mp4', 'muxed_progressive', { codecs: `${AVC},${AAC}` })], {
        operation: 'convert',
        format: 'mp4',
        duration: 7,
        clip: { ...CLIP, mode: 'fast' },
      }),
    );
    expect(method).toBe('copy');
  });
});

// The page's helpers, as a script of its own (the tests' TypeScript has no DOM types): the mean
// brightness of the frame shown at a time, and one playback from the start to its end.
const PAGE = `<video id="v" muted playsinline src="/clip.mp4"></video><canvas id="c" width="32" height="24"></canvas>
<script>
const v = document.getElementById('v');
function brightness(time) {
  return new Promise((resolve) => {
    v.onseeked = () => {
      const g = document.getElementById('c').getContext('2d');
      g.drawImage(v, 0, 0, 32, 24);
      const px = g.getImageData(0, 0, 32, 24).data;
      let sum = 0;
      for (let i = 0; i < px.length; i += 4) sum += (px[i] + px[i + 1] + px[i + 2]) / 3;
      resolve(sum / (px.length / 4));
    };
    setTimeout(() => resolve(-1), 10000);
    if (v.readyState >= 1) v.currentTime = time;
    else v.onloadedmetadata = () => (v.currentTime = time);
  });
}
function playAll() {
  return new Promise((resolve) => {
    const done = (ended) => resolve({ ended, error: v.error ? v.error.code + ' ' + v.error.message : null, decoded: v.getVideoPlaybackQuality().totalVideoFrames });
    v.onended = () => done(true);
    v.onerror = () => done(false);
    v.play().catch(() => done(false));
    setTimeout(() => done(false), 20000);
  });
}
</script>`;

describeWithTools('chromium', [{ bin: '/usr/bin/chromium', install: 'apt-get install chromium' }], () => {
  test('plays a smart cut through the seam: every frame decoded, the white frames where they belong', async () => {
    // The progressive clip of the first test, or made here when this test runs alone.
    const file =
      progressiveClip ??
      (
        await run(
          payload([...KINDS[0].inputs()], {
            operation: 'convert',
            format: 'mp4',
            duration: 7,
            clip: { ...CLIP, mode: 'precise' },
          }),
        )
      ).file;
    const data = fs.readFileSync(file);
    const server = http.createServer((req, res) => {
      if (req.url === '/') {
        res.setHeader('content-type', 'text/html');
        res.end(PAGE);
        return;
      }
      // Ranges, or chromium cannot seek.
      const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
      res.setHeader('content-type', 'video/mp4');
      res.setHeader('accept-ranges', 'bytes');
      if (!range) return void res.end(data);
      const from = Number(range[1]);
      const to = range[2] ? Math.min(Number(range[2]), data.length - 1) : data.length - 1;
      res.writeHead(206, { 'content-range': `bytes ${from}-${to}/${data.length}` });
      res.end(data.subarray(from, to + 1));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--autoplay-policy=no-user-gesture-required',
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      // Each white frame (one in the head, one in the copied body) where it belongs, and the frame after it not.
      for (const t of FLASHES) {
        expect(await page.evaluate(`brightness(${t - CLIP.start + 0.5 / FPS})`)).toBeGreaterThan(230);
        expect(await page.evaluate(`brightness(${t - CLIP.start + 2.5 / FPS})`)).toBeLessThan(200);
      }
      await page.reload(); // counts the frames of one playback from the start
      const played = (await page.evaluate('playAll()')) as { ended: boolean; error: string | null; decoded: number };
      expect(played.error).toBeNull();
      expect(played.ended).toBe(true);
      expect(played.decoded).toBe(videoPackets(file).length);
    } finally {
      await browser.close();
      server.close();
    }
  });
});
