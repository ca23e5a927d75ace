// Smart cut's decisions and argument vectors, as pure functions: where the copy begins and ends,
// when the clip is re-encoded whole instead, and what each step asks of ffmpeg.
import { describe, expect, test } from '@jest/globals';
import {
  audioArgs,
  audioCopyArgs,
  bodyArgs,
  fetchRangeArgs,
  headEncodeArgs,
  joinArgs,
  joinScript,
  MAX_HEAD_SECONDS,
  planAudioCopy,
  planSmartCut,
  rangeInputs,
  tailArgs,
  unsplicable,
  type AudioPacket,
  type RangePacket,
  type VideoParams,
} from '../src/index.js';

const F = 1 / 30;
/**
 * Closed GOPs of `gop` frames with IBBP order (decode order: I P B B P B B …), from time 0; each
 * packet decodes one frame after the one before it, two frames before the first is shown.
 */
function gops(count: number, gop = 30, { open = false } = {}): RangePacket[] {
  const shown: { pts: number; key: boolean }[] = [];
  for (let g = 0; g < count; g++) {
    const base = g * gop;
    shown.push({ pts: base, key: true });
    if (open && g > 0) shown.push({ pts: base - 1, key: false }); // a leading picture
    let i = 3;
    for (; i < gop; i += 3)
      shown.push({ pts: base + i, key: false }, { pts: base + i - 2, key: false }, { pts: base + i - 1, key: false });
    for (let j = i - 2; j < gop; j++) shown.push({ pts: base + j, key: false }); // P-frames to the GOP's end
  }
  return shown.map((p, k) => ({ pts: p.pts * F, dts: (k - 2) * F, key: p.key }));
}

/** The frames (as frame numbers) a plan shows: the copied packets' and the tail's. */
function shownFrames(packets: RangePacket[], plan: ReturnType<typeof planSmartCut>): number[] {
  if (plan.method !== 'smart') throw new Error(plan.reason);
  const from = packets.findIndex((p) => p.key && p.pts >= plan.keyframe - 0.0005);
  const to = plan.outpoint === undefined ? packets.length : packets.findIndex((p) => p.dts === plan.outpoint);
  const copied = packets.slice(from, to).map((p) => Math.round(p.pts / F));
  const tail = plan.tail ? Array.from({ length: plan.tail.frames }, (_, i) => Math.round(plan.tail!.from / F) + i) : [];
  return [...copied, ...tail].sort((a, b) => a - b);
}

const H264: VideoParams = {
  codec: 'h264',
  profile: 'High',
  level: 40,
  width: 1920,
  height: 1080,
  pixFmt: 'yuv420p',
  fieldOrder: 'progressive',
  timeBase: '1/15360',
  reorderDepth: 2,
  colorRange: 'tv',
  colorSpace: 'bt709',
  colorTransfer: 'unknown',
  colorPrimaries: 'bt709',
};

describe('planSmartCut', () => {
  test('copies from the first keyframe at or after start; the B-frames before end decoded after a frame past it make the tail', () => {
    const packets = gops(4);
    const plan = planSmartCut(packets, 1.5, 2.5);
    expect(plan).toMatchObject({ method: 'smart', headFrames: 15, tail: { frames: 2 } });
    if (plan.method !== 'smart') return;
    expect(plan.keyframe).toBeCloseTo(2, 6);
    // The P-frame shown at 2.5 s (frame 75) is decoded at 71, before B-frames 73 and 74: the copy
    // stops before it and ends on frame 72, and the tail encodes 73 and 74, decoding the GOP from
    // its keyframe through B-frame 74 (decoded at 73).
    expect(plan.outpoint).toBeCloseTo(71 * F, 6);
    expect(plan.tail!.from).toBeCloseTo(73 * F, 6);
    expect(plan.tail!.seek).toBeCloseTo(2, 6);
    expect(plan.tail!.through).toBeCloseTo(73 * F, 6);
    expect(shownFrames(packets, plan)).toEqual(Array.from({ length: 15 }, (_, i) => 60 + i));
  });

  test('an end just after a group of B-frames needs no tail', () => {
    const packets = gops(4);
    const plan = planSmartCut(packets, 1.5, 76 * F);
    expect(plan).toMatchObject({ method: 'smart', tail: undefined });
    expect(plan.method === 'smart' && plan.outpoint).toBeCloseTo(74 * F, 6); // P-frame 78, decoded at 74
    expect(shownFrames(packets, plan)).toEqual(Array.from({ length: 16 }, (_, i) => 60 + i));
  });

  test('every end point of a GOP shows exactly the frames from the keyframe to the one before end', () => {
    const packets = gops(3);
    for (let n = 1; n <= 30; n++) {
      const end = (30 + n) * F;
      expect(shownFrames(packets, planSmartCut(packets, 0.5, end))).toEqual(
        Array.from({ length: n }, (_, i) => 30 + i),
      );
    }
  });

  test('a start on a keyframe needs no head', () => {
    expect(planSmartCut(gops(3), 1, 2.5)).toMatchObject({ method: 'smart', keyframe: 1, headFrames: 0 });
  });

  test('a clip ending past the range copies to its end', () => {
    expect(planSmartCut(gops(3), 0.5, 5)).toMatchObject({ method: 'smart', keyframe: 1, outpoint: undefined });
  });

  test('no keyframe inside the clip, or one too far after start, means a full re-encode', () => {
    expect(planSmartCut(gops(3), 0.2, 0.9)).toMatchObject({
      method: 'reencode',
      reason: expect.stringContaining('no keyframe'),
    });
    const sparse = gops(2, 30 * (MAX_HEAD_SECONDS + 2));
    expect(planSmartCut(sparse, 0.5, MAX_HEAD_SECONDS + 5)).toMatchObject({
      method: 'reencode',
      reason: expect.stringContaining('more than 10 s'),
    });
  });

  test('an open GOP (a frame after the keyframe shown before it) is not spliced', () => {
    expect(planSmartCut(gops(3, 30, { open: true }), 0.5, 2.5)).toMatchObject({
      method: 'reencode',
      reason: expect.stringContaining('open GOP'),
    });
  });
});

describe('planAudioCopy', () => {
  const FRAME = 1024 / 48_000;
  // AAC frames of 48 kHz from 3.989333 s, as a range fetched from 4 s holds them.
  const aac = (n = 400, first = 3.989333): AudioPacket[] =>
    Array.from({ length: n }, (_, i) => ({ pts: first + i * FRAME, duration: FRAME }));

  test('copies from the frame before the one holding start, shifted so start is 0', () => {
    const plan = planAudioCopy('aac', aac(), 4.2, 12, 'mp4');
    // 4.2 lies in frame 9 (4.181333 + 0.021333); frame 8 (4.16) is decoded and dropped first.
    const preroll = 3.989333 + 8 * FRAME;
    expect(plan?.from).toBeCloseTo(preroll - FRAME / 2, 6);
    expect(plan?.offset).toBeCloseTo(preroll - FRAME / 2 - 4.2, 6);
    expect(audioCopyArgs('range.nut', plan!, 12, 'audio.m4a').join(' ')).toContain(
      '-c:a copy -ss 4.149333 -to 12.000 -output_ts_offset -0.050667',
    );
  });

  test('encodes instead where a copy could not start or follow on exactly', () => {
    expect(planAudioCopy('opus', aac(), 4.2, 12, 'mp4')).toBeUndefined();
    expect(planAudioCopy('aac', aac(), 4.2, 12, 'mkv')).toBeUndefined(); // Matroska keeps no edit list
    expect(planAudioCopy('aac', aac(), 3.995, 12, 'mp4')).toBeUndefined(); // start in the first frame: none to decode before it
    expect(planAudioCopy('aac', aac(), 3.5, 12, 'mp4')).toBeUndefined(); // start before the audio
    const repeated = aac();
    repeated.splice(100, 0, { ...repeated[100], pts: repeated[100].pts + 0.00002 }); // DASH's repeated second
    expect(planAudioCopy('aac', repeated, 4.2, 12, 'mp4')).toBeUndefined();
    const gap = aac().filter((_, i) => i !== 200);
    expect(planAudioCopy('aac', gap, 4.2, 12, 'mp4')).toBeUndefined();
    // The same gap after end does not matter: those packets are not copied.
    expect(planAudioCopy('aac', gap, 4.2, 7, 'mp4')).toBeDefined();
    expect(
      planAudioCopy(
        'aac',
        aac().map((p) => ({ ...p, duration: 0 })),
        4.2,
        12,
        'mp4',
      ),
    ).toBeUndefined();
  });
});

describe('unsplicable', () => {
  test('H.264 progressive 8-bit is spliced; VP9, AV1, interlaced and deep reordering are not', () => {
    expect(unsplicable(H264)).toBeUndefined();
    expect(unsplicable({ ...H264, codec: 'vp9' })).toContain('vp9');
    expect(unsplicable({ ...H264, codec: 'av1' })).toContain('av1');
    expect(unsplicable({ ...H264, fieldOrder: 'tt' })).toContain('interlaced');
    expect(unsplicable({ ...H264, reorderDepth: 3 })).toContain('reorder');
    expect(unsplicable({ ...H264, profile: 'High 4:4:4 Intra' })).toContain('profile');
  });

  test('HEVC is spliced in the profiles and pixel formats x265 makes', () => {
    expect(unsplicable(HEVC)).toBeUndefined();
    expect(unsplicable({ ...HEVC, profile: 'Main 10', pixFmt: 'yuv420p10le' })).toBeUndefined();
    expect(unsplicable({ ...HEVC, profile: 'Rext', pixFmt: 'yuv444p' })).toBeUndefined();
    expect(unsplicable({ ...HEVC, profile: 'Main 10', pixFmt: 'yuv420p' })).toContain('profile');
    expect(unsplicable({ ...HEVC, profile: 'Rext', pixFmt: 'gbrp' })).toContain('profile');
    expect(unsplicable({ ...HEVC, profile: 'Main', fieldOrder: 'tb' })).toContain('interlaced');
  });
});

const HEVC: VideoParams = { ...H264, codec: 'hevc', profile: 'Main', level: 123 };

describe('arguments', () => {
  test('the head encoder matches profile, level, pixel format, time base and colour', () => {
    expect(headEncodeArgs(H264)).toEqual([
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '18',
      '-profile:v',
      'high',
      '-level:v',
      '4.0',
      '-pix_fmt',
      'yuv420p',
      '-enc_time_base:v',
      '1/15360',
      '-color_range',
      'tv',
      '-colorspace',
      'bt709',
      '-color_primaries',
      'bt709',
    ]);
  });

  test("an HEVC head is x265 with the stream's profile and level (level_idc / 30), pixel format, time base and colour", () => {
    expect(headEncodeArgs(HEVC)).toEqual([
      '-c:v',
      'libx265',
      '-preset',
      'veryfast',
      '-crf',
      '18',
      '-profile:v',
      'main',
      '-x265-params',
      'log-level=error:level-idc=4.1',
      '-pix_fmt',
      'yuv420p',
      '-enc_time_base:v',
      '1/15360',
      '-color_range',
      'tv',
      '-colorspace',
      'bt709',
      '-color_primaries',
      'bt709',
    ]);
    expect(headEncodeArgs({ ...HEVC, profile: 'Rext', pixFmt: 'yuv422p10le', level: undefined })).toEqual(
      expect.arrayContaining(['-profile:v', 'main422-10', '-x265-params', 'log-level=error']),
    );
  });

  test('an HEVC level too small for the picture or its rate is left to x265 (which refuses to open at it)', () => {
    expect(headEncodeArgs({ ...HEVC, level: 93 })).toContain('log-level=error'); // 1080p at 3.1
    expect(headEncodeArgs({ ...HEVC, level: 120, frameRate: 60 })).toContain('log-level=error'); // 1080p60 at 4
    expect(headEncodeArgs({ ...HEVC, level: 123, frameRate: 60 })).toContain('log-level=error:level-idc=4.1');
    expect(headEncodeArgs({ ...HEVC, level: 121 })).toContain('log-level=error'); // no such level
  });

  test("the fetch seeks every input, copies into NUT with the input's own timestamps, and reads only http through the proxy", () => {
    const args = fetchRangeArgs(
      rangeInputs({
        type: 'merge',
        videoInput: { url: 'http://a.test/v.mp4' },
        audioInput: { url: 'http://a.test/a.m4a' },
        container: 'mp4',
      }),
      2.5,
      7.5,
      '/tmp/job/range.nut',
    );
    expect(args.join(' ')).toBe(
      '-hide_banner -nostdin -y -loglevel error -nostats -copyts -start_at_zero ' +
        '-ss 2.500 -protocol_whitelist http,tcp -format_whitelist mov,matroska,mp3,aac,ogg,wav,flac,flv,mpegts,avi,ac3,eac3 -i http://a.test/v.mp4 ' +
        '-ss 2.500 -protocol_whitelist http,tcp -format_whitelist mov,matroska,mp3,aac,ogg,wav,flac,flv,mpegts,avi,ac3,eac3 -i http://a.test/a.m4a ' +
        '-map 0:v:0 -map 1:a:0 -c copy -to 7.500 -f nut file:/tmp/job/range.nut',
    );
  });

  test('the body is chosen by packet times, the join reads local files only, copies both streams and tags H.264 avc3', () => {
    expect(bodyArgs('/j/range.nut', H264, 3.0, 5.4, '/j/body.nut')).toContain(
      'noise=drop=lt(pts*tb\\,2.999500)+gte(dts*tb\\,5.399500)',
    );
    expect(joinScript('head.nut', 'body.nut', 2.5, 3.0)).toBe(
      "ffconcat version 1.0\nfile 'head.nut'\ninpoint 2.500000\nduration 0.500000\nfile 'body.nut'\ninpoint 3.000000\n",
    );
    const join = joinArgs('/j/join.ffconcat', '/j/audio.m4a', '/j/out.part', { format: 'mp4', codec: 'h264' });
    expect(join.filter((_, i) => join[i - 1] === '-protocol_whitelist')).toEqual(['file', 'file']);
    expect(join.filter((_, i) => join[i - 1] === '-format_whitelist')).toEqual(['concat,nut', 'mov']);
    expect(join).toEqual(expect.arrayContaining(['-map', '1:a:0', '-tag:v', 'avc3', '-c:v', 'copy', '-c:a', 'copy']));
    expect(join.some((a) => a === '-af' || a === 'aac')).toBe(false); // nothing encoded in the join
    const silent = joinArgs('/j/join.ffconcat', undefined, '/j/out.part', { format: 'mkv', codec: 'h264' });
    expect(silent).not.toContain('-tag:v');
    expect(silent).not.toContain('-c:a');
    expect(silent.filter((a) => a === '-i')).toHaveLength(1);
  });

  test('the audio is cut at the sample from the range and encoded once, beside the head, into an M4A the join copies', () => {
    expect(audioArgs('/j/range.nut', 2.5, 7.5, '/j/audio.m4a', 'mkv')).toEqual([
      '-hide_banner',
      '-nostdin',
      '-y',
      '-loglevel',
      'error',
      '-nostats',
      '-copyts',
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      'nut',
      '-i',
      'file:/j/range.nut',
      '-map',
      '0:a:0',
      '-af',
      'aselect=isnan(prev_selected_t)+gte(t-prev_selected_t\\,0.5*samples_n/sample_rate),atrim=start=2.500:end=7.500,asetpts=PTS-STARTPTS',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-vn',
      '-f',
      'mp4',
      'file:/j/audio.m4a',
    ]);
  });

  test('an HEVC body turns Annex B in the copy (the concat demuxer does it for H.264 only), and the join tags it hev1', () => {
    expect(bodyArgs('/j/range.nut', HEVC, 3.0, undefined, '/j/body.nut')).toContain(
      'noise=drop=lt(pts*tb\\,2.999500),hevc_mp4toannexb',
    );
    expect(joinArgs('/j/join.ffconcat', '/j/audio.m4a', '/j/out.part', { format: 'mp4', codec: 'hevc' })).toEqual(
      expect.arrayContaining(['-tag:v', 'hev1']),
    );
  });

  test("a tail: its packets set aside by the body's read, encoded without B-frames with its own parameter sets, joined after the body", () => {
    const tail = { from: 5.3, seek: 5.0, through: 5.4, frames: 3 };
    const body = bodyArgs('/j/range.nut', H264, 3.0, 5.2, '/j/body.nut', { tail, output: '/j/tail-source.nut' });
    expect(body.slice(body.indexOf('file:/j/body.nut') + 1)).toEqual([
      '-map',
      '0:v:0',
      '-c',
      'copy',
      '-bsf:v',
      'noise=drop=lt(pts*tb\\,4.999500)+gt(dts*tb\\,5.400500)',
      '-an',
      '-f',
      'nut',
      'file:/j/tail-source.nut',
    ]);
    const encode = tailArgs('/j/tail-source.nut', H264, tail, 5.4, '/j/tail.nut');
    expect(encode).toEqual(
      expect.arrayContaining([
        '-i',
        'file:/j/tail-source.nut',
        '-vf',
        'trim=start=5.299500:end=5.399500',
        '-bf',
        '0',
        '-bsf:v',
        'dump_extra=freq=keyframe',
      ]),
    );
    expect(joinScript('head.nut', 'body.nut', 2.5, 3.0, { file: 'tail.nut', from: 5.3 })).toBe(
      "ffconcat version 1.0\nfile 'head.nut'\ninpoint 2.500000\nduration 0.500000\nfile 'body.nut'\ninpoint 3.000000\nduration 2.300000\nfile 'tail.nut'\ninpoint 5.300000\n",
    );
  });
});
