// Smart cut's decisions and argument vectors, as pure functions: where the copy begins and ends,
// when the clip is re-encoded whole instead, and what each step asks of ffmpeg.
import { describe, expect, test } from '@jest/globals';
import { bodyArgs, fetchRangeArgs, headEncodeArgs, joinArgs, joinScript, MAX_HEAD_SECONDS, planSmartCut, rangeInputs, unsplicable, type RangePacket, type VideoParams } from '../src/index.js';

const F = 1 / 30;
/** Closed GOPs of `gop` frames with IBBP order (decode order: I P B B P B B …), from time 0. */
function gops(count: number, gop = 30, { open = false } = {}): RangePacket[] {
  const out: RangePacket[] = [];
  for (let g = 0; g < count; g++) {
    const base = g * gop;
    out.push({ pts: base * F, dts: (base - 2) * F, key: true });
    if (open && g > 0) out.push({ pts: (base - 1) * F, dts: (base - 1) * F, key: false }); // a leading picture
    let i = 3;
    for (; i < gop; i += 3) {
      out.push({ pts: (base + i) * F, dts: (base + i - 2) * F, key: false });
      out.push({ pts: (base + i - 2) * F, dts: (base + i - 1) * F, key: false });
      out.push({ pts: (base + i - 1) * F, dts: (base + i) * F, key: false });
    }
    for (let j = i - 2; j < gop; j++) out.push({ pts: (base + j) * F, dts: (base + j) * F, key: false }); // P-frames to the GOP's end
  }
  return out;
}

const H264: VideoParams = { codec: 'h264', profile: 'High', level: 40, width: 1920, height: 1080, pixFmt: 'yuv420p', fieldOrder: 'progressive', timeBase: '1/15360', reorderDepth: 2, colorRange: 'tv', colorSpace: 'bt709', colorTransfer: 'unknown', colorPrimaries: 'bt709' };

describe('planSmartCut', () => {
  test('copies from the first keyframe at or after start and stops before the first frame at or after end', () => {
    const plan = planSmartCut(gops(4), 1.5, 2.5);
    expect(plan).toMatchObject({ method: 'smart', headFrames: 15 });
    expect(plan.method === 'smart' && plan.keyframe).toBeCloseTo(2, 6);
    // The packet showing frame 75 (2.5 s) is a P-frame decoded at frame 73.
    expect(plan.method === 'smart' && plan.outpoint).toBeCloseTo(73 * F, 6);
  });

  test('a start on a keyframe needs no head', () => {
    expect(planSmartCut(gops(3), 1, 2.5)).toMatchObject({ method: 'smart', keyframe: 1, headFrames: 0 });
  });

  test('a clip ending past the range copies to its end', () => {
    expect(planSmartCut(gops(3), 0.5, 5)).toMatchObject({ method: 'smart', keyframe: 1, outpoint: undefined });
  });

  test('no keyframe inside the clip, or one too far after start, means a full re-encode', () => {
    expect(planSmartCut(gops(3), 0.2, 0.9)).toMatchObject({ method: 'reencode', reason: expect.stringContaining('no keyframe') });
    const sparse = gops(2, 30 * (MAX_HEAD_SECONDS + 2));
    expect(planSmartCut(sparse, 0.5, MAX_HEAD_SECONDS + 5)).toMatchObject({ method: 'reencode', reason: expect.stringContaining('more than 10 s') });
  });

  test('an open GOP (a frame after the keyframe shown before it) is not spliced', () => {
    expect(planSmartCut(gops(3, 30, { open: true }), 0.5, 2.5)).toMatchObject({ method: 'reencode', reason: expect.stringContaining('open GOP') });
  });
});

describe('unsplicable', () => {
  test('H.264 progressive 8-bit is spliced; VP9, AV1, HEVC, interlaced and deep reordering are not', () => {
    expect(unsplicable(H264)).toBeUndefined();
    expect(unsplicable({ ...H264, codec: 'vp9' })).toContain('vp9');
    expect(unsplicable({ ...H264, codec: 'av1' })).toContain('av1');
    expect(unsplicable({ ...H264, fieldOrder: 'tt' })).toContain('interlaced');
    expect(unsplicable({ ...H264, reorderDepth: 3 })).toContain('reorder');
    expect(unsplicable({ ...H264, codec: 'hevc', profile: 'Main' })).toContain('hevc');
    expect(unsplicable({ ...H264, profile: 'High 4:4:4 Intra' })).toContain('profile');
  });
});

describe('arguments', () => {
  test('the head encoder matches profile, level, pixel format, time base and colour', () => {
    expect(headEncodeArgs(H264)).toEqual(['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-profile:v', 'high', '-level:v', '4.0', '-pix_fmt', 'yuv420p', '-enc_time_base:v', '1/15360', '-color_range', 'tv', '-colorspace', 'bt709', '-color_primaries', 'bt709']);
  });

  test('the fetch seeks every input, copies into NUT with the input\'s own timestamps, and reads only http through the proxy', () => {
    const args = fetchRangeArgs(rangeInputs({ type: 'merge', videoInput: { url: 'http://a.test/v.mp4' }, audioInput: { url: 'http://a.test/a.m4a' }, container: 'mp4' }), 2.5, 7.5, '/tmp/job/range.nut');
    expect(args.join(' ')).toBe(
      '-hide_banner -nostdin -y -loglevel error -nostats -copyts -start_at_zero ' +
        '-ss 2.500 -protocol_whitelist http,tcp -format_whitelist mov,matroska,mp3,aac,ogg,wav,flac,flv,mpegts,avi,ac3,eac3 -i http://a.test/v.mp4 ' +
        '-ss 2.500 -protocol_whitelist http,tcp -format_whitelist mov,matroska,mp3,aac,ogg,wav,flac,flv,mpegts,avi,ac3,eac3 -i http://a.test/a.m4a ' +
        '-map 0:v:0 -map 1:a:0 -c copy -to 7.500 -f nut file:/tmp/job/range.nut',
    );
  });

  test('the body is chosen by packet times, the join reads local files only and tags H.264 avc3', () => {
    expect(bodyArgs('/j/range.nut', 3.0, 5.4, '/j/body.nut')).toContain('noise=drop=lt(pts*tb\\,2.999500)+gte(dts*tb\\,5.399500)');
    expect(joinScript('head.nut', 'body.nut', 2.5, 3.0)).toBe("ffconcat version 1.0\nfile 'head.nut'\ninpoint 2.500000\nduration 0.500000\nfile 'body.nut'\ninpoint 3.000000\n");
    const join = joinArgs('/j/join.ffconcat', '/j/range.nut', 2.5, 7.5, '/j/out.part', { format: 'mp4', audio: true });
    expect(join.filter((_, i) => join[i - 1] === '-protocol_whitelist')).toEqual(['file', 'file']);
    expect(join).toEqual(expect.arrayContaining(['-tag:v', 'avc3', '-c:v', 'copy', '-c:a', 'aac']));
    expect(joinArgs('/j/join.ffconcat', '/j/range.nut', 2.5, 7.5, '/j/out.part', { format: 'mkv', audio: false })).not.toContain('-tag:v');
  });
});
