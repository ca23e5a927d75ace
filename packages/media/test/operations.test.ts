import { describe, expect, test } from '@jest/globals';
import { DEMUXERS, inputArgs, type InputKind } from '../src/inputs.js';
import { buildArgs, outputFormat, type ConvertOperation, type MediaOperation } from '../src/operations.js';

const GLOBAL = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats'];
const OUT = '/data/tmp/job.part';
const V = 'http://127.0.0.1:4100/relay/v';
const A = 'http://127.0.0.1:4100/relay/a';
const NET = (url: string, kind: InputKind = 'progressive') => [
  '-protocol_whitelist',
  'http,tcp',
  '-format_whitelist',
  DEMUXERS[kind],
  '-i',
  url,
];
const FILE = (path: string, kind: InputKind = 'progressive') => [
  '-protocol_whitelist',
  'file',
  '-format_whitelist',
  DEMUXERS[kind],
  '-i',
  `file:${path}`,
];

function argv(op: MediaOperation): string[] {
  return buildArgs(op, { output: OUT }).args;
}

describe('merge', () => {
  test('into mp4 copies both streams and moves the index to the front', () => {
    expect(argv({ type: 'merge', videoInput: V, audioInput: A, container: 'mp4' })).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...NET(A),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('into webm copies both streams', () => {
    expect(argv({ type: 'merge', videoInput: V, audioInput: A, container: 'webm' })).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...NET(A),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-f',
      'webm',
      `file:${OUT}`,
    ]);
  });

  test('into mkv copies both streams with the matroska muxer', () => {
    expect(argv({ type: 'merge', videoInput: '/in/v.mp4', audioInput: '/in/a.webm', container: 'mkv' })).toEqual([
      ...GLOBAL,
      ...FILE('/in/v.mp4'),
      ...FILE('/in/a.webm'),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-f',
      'matroska',
      `file:${OUT}`,
    ]);
  });

  test('returns its input and output parts separately, and the whole argv', () => {
    const built = buildArgs({ type: 'merge', videoInput: V, audioInput: A, container: 'mkv' }, { output: OUT });
    expect(built.inputArgs).toEqual([...NET(V), ...NET(A)]);
    expect(built.outputArgs).toEqual(['-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-f', 'matroska']);
    expect(built.args).toEqual([...GLOBAL, ...built.inputArgs, ...built.outputArgs, `file:${OUT}`]);
  });
});

describe('merge with codecs that do not fit', () => {
  test('encodes only the stream that does not fit the container', () => {
    expect(
      argv({
        type: 'merge',
        videoInput: V,
        audioInput: A,
        container: 'mp4',
        videoCodec: 'avc1.64001f',
        audioCodec: 'opus',
      }),
    ).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...NET(A),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c:v',
      'copy',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('copies both when they fit, and anything into mkv', () => {
    const copy = ['-map', '0:v:0', '-map', '1:a:0', '-c', 'copy'];
    expect(
      buildArgs(
        { type: 'merge', videoInput: V, audioInput: A, container: 'webm', videoCodec: 'vp9', audioCodec: 'opus' },
        { output: OUT },
      ).outputArgs,
    ).toEqual([...copy, '-f', 'webm']);
    expect(
      buildArgs(
        { type: 'merge', videoInput: V, audioInput: A, container: 'mkv', videoCodec: 'vp9', audioCodec: 'aac' },
        { output: OUT },
      ).outputArgs,
    ).toEqual([...copy, '-f', 'matroska']);
  });
});

describe('convert to an audio format', () => {
  const convert = (format: ConvertOperation['format'], audioCodec?: string): string[] =>
    argv({ type: 'convert', input: V, format, audioCodec });
  const AUDIO = ['-map', '0:a:0', '-vn'];

  test('mp3 encodes with LAME at VBR quality 2', () => {
    expect(convert('mp3', 'aac')).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'libmp3lame',
      '-q:a',
      '2',
      '-f',
      'mp3',
      `file:${OUT}`,
    ]);
  });

  test('mp3 copies audio that already is mp3', () => {
    expect(convert('mp3', 'mp3')).toEqual([...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'copy', '-f', 'mp3', `file:${OUT}`]);
  });

  test('m4a encodes AAC at 192k into an M4A with faststart', () => {
    expect(convert('m4a', 'opus')).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      '-f',
      'ipod',
      `file:${OUT}`,
    ]);
  });

  test('m4a copies audio that already is AAC', () => {
    expect(convert('m4a', 'mp4a.40.2')).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'ipod',
      `file:${OUT}`,
    ]);
  });

  test('opus encodes libopus at 128k into Ogg', () => {
    expect(convert('opus')).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'libopus',
      '-b:a',
      '128k',
      '-f',
      'opus',
      `file:${OUT}`,
    ]);
  });

  test('opus copies audio that already is Opus', () => {
    expect(convert('opus', 'opus')).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'copy',
      '-f',
      'opus',
      `file:${OUT}`,
    ]);
  });

  test('streams known to fit (a whole file in its own format) are copied whatever the codec name says', () => {
    expect(argv({ type: 'convert', input: V, format: 'm4a', streamsFit: true })).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'ipod',
      `file:${OUT}`,
    ]);
    expect(argv({ type: 'convert', input: V, format: 'mp3', audioCodec: 'opus', streamsFit: true })).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'copy',
      '-f',
      'mp3',
      `file:${OUT}`,
    ]);
    // wav has nothing to copy into: PCM is written.
    expect(argv({ type: 'convert', input: V, format: 'wav', streamsFit: true })).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      `file:${OUT}`,
    ]);
  });

  test('wav always writes 16-bit PCM', () => {
    expect(convert('wav', 'pcm_s16le')).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...AUDIO,
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      `file:${OUT}`,
    ]);
  });
});

describe('convert to a container', () => {
  const MAPS = ['-map', '0:v:0?', '-map', '0:a:0?'];
  const X264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p'];
  const VP9 = [
    '-c:v',
    'libvpx-vp9',
    '-crf',
    '32',
    '-b:v',
    '0',
    '-row-mt',
    '1',
    '-deadline',
    'good',
    '-cpu-used',
    '4',
    '-pix_fmt',
    'yuv420p',
  ];
  const convert = (format: ConvertOperation['format'], videoCodec?: string, audioCodec?: string): string[] =>
    argv({ type: 'convert', input: '/in/x', format, videoCodec, audioCodec });

  test('mp4 remuxes when both codecs fit', () => {
    expect(convert('mp4', 'avc1.64001f', 'mp4a.40.2')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('mp4 encodes only the audio when the video fits', () => {
    expect(convert('mp4', 'h264', 'opus')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      '-c:v',
      'copy',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('mp4 encodes only the video when the audio fits', () => {
    expect(convert('mp4', 'vp9', 'aac')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      ...X264,
      '-c:a',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('mp4 encodes both streams when the codecs are unknown', () => {
    expect(convert('mp4')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      ...X264,
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('streams known to fit (a whole file in its own format) are copied though the codecs are unknown', () => {
    expect(argv({ type: 'convert', input: '/in/x', format: 'mp4', streamsFit: true })).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('webm remuxes when both codecs fit', () => {
    expect(convert('webm', 'vp09.00.10.08', 'opus')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      '-c',
      'copy',
      '-f',
      'webm',
      `file:${OUT}`,
    ]);
  });

  test('webm encodes VP9 and Opus for H.264 and AAC', () => {
    expect(convert('webm', 'h264', 'aac')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      ...VP9,
      '-c:a',
      'libopus',
      '-b:a',
      '128k',
      '-f',
      'webm',
      `file:${OUT}`,
    ]);
  });

  test('webm encodes only the audio when the video fits', () => {
    expect(convert('webm', 'av1', 'aac')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      '-c:v',
      'copy',
      '-c:a',
      'libopus',
      '-b:a',
      '128k',
      '-f',
      'webm',
      `file:${OUT}`,
    ]);
  });

  test('mkv copies any codecs, known or not', () => {
    expect(convert('mkv', 'theora', 'flac')).toEqual([
      ...GLOBAL,
      ...FILE('/in/x'),
      ...MAPS,
      '-c',
      'copy',
      '-f',
      'matroska',
      `file:${OUT}`,
    ]);
    expect(convert('mkv')).toEqual(convert('mkv', 'theora', 'flac'));
  });
});

describe('convert a segmented input', () => {
  const mpd = 'http://127.0.0.1:4100/dash/manifest.mpd';

  test('a DASH audio representation into mp3 maps that representation and encodes it', () => {
    expect(
      argv({ type: 'convert', input: mpd, manifest: 'dash', representation: '1', format: 'mp3', audioCodec: 'aac' }),
    ).toEqual([
      ...GLOBAL,
      ...NET(mpd, 'dash'),
      '-map',
      '0:m:id:1',
      '-vn',
      '-c:a',
      'libmp3lame',
      '-q:a',
      '2',
      '-f',
      'mp3',
      `file:${OUT}`,
    ]);
  });

  test('an HLS playlist into webm uses the HLS demuxers and the crypto protocol when asked', () => {
    const url = 'http://127.0.0.1:4100/hls/index.m3u8';
    const built = buildArgs(
      {
        type: 'convert',
        input: url,
        manifest: 'hls',
        aes128: true,
        format: 'webm',
        videoCodec: 'h264',
        audioCodec: 'aac',
      },
      { output: OUT },
    );
    expect(built.inputArgs).toEqual([
      '-protocol_whitelist',
      'crypto,http,tcp',
      '-format_whitelist',
      DEMUXERS.hls,
      '-i',
      url,
    ]);
    expect(built.outputArgs.slice(0, 6)).toEqual(['-map', '0:v:0?', '-map', '0:a:0?', '-c:v', 'libvpx-vp9']);
  });
});

describe('remux', () => {
  test('an HLS playlist into mp4 copies its streams and rewraps ADTS AAC', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mp4', audioCodec: 'mp4a.40.2' })).toEqual([
      ...GLOBAL,
      ...NET(url, 'hls'),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      '-c',
      'copy',
      '-bsf:a',
      'aac_adtstoasc',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('an HLS playlist with unknown or non-AAC audio gets no bitstream filter', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    const expected = [
      ...GLOBAL,
      ...NET(url, 'hls'),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ];
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mp4' })).toEqual(expected);
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mp4', audioCodec: 'mp3' })).toEqual(expected);
  });

  test('an HLS playlist into mkv needs no bitstream filter or faststart', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mkv', audioCodec: 'aac' })).toEqual([
      ...GLOBAL,
      ...NET(url, 'hls'),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      '-c',
      'copy',
      '-f',
      'matroska',
      `file:${OUT}`,
    ]);
  });

  test('AES-128 HLS also allows the crypto protocol, for that input only', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    expect(
      buildArgs({ type: 'remux', manifest: 'hls', input: url, container: 'mkv', aes128: true }, { output: OUT })
        .inputArgs,
    ).toEqual(['-protocol_whitelist', 'crypto,http,tcp', '-format_whitelist', DEMUXERS.hls, '-i', url]);
  });

  test('a video and an audio playlist into mp4 map one stream from each', () => {
    expect(
      argv({ type: 'remux', manifest: 'hls', videoInput: V, audioInput: A, container: 'mp4', audioCodec: 'aac' }),
    ).toEqual([
      ...GLOBAL,
      ...NET(V, 'hls'),
      ...NET(A, 'hls'),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-bsf:a',
      'aac_adtstoasc',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('a DASH representation pair is picked by representation id', () => {
    const mpd = 'http://127.0.0.1:4100/relay/dash/manifest.mpd';
    expect(
      argv({
        type: 'remux',
        manifest: 'dash',
        videoInput: mpd,
        audioInput: mpd,
        videoRepresentation: 'v1080',
        audioRepresentation: 'a-en=128000',
        container: 'mp4',
        audioCodec: 'aac',
      }),
    ).toEqual([
      ...GLOBAL,
      ...NET(mpd, 'dash'),
      ...NET(mpd, 'dash'),
      '-map',
      '0:v:m:id:v1080',
      '-map',
      '1:a:m:id:a-en=128000',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('a single DASH representation is picked by its id', () => {
    const mpd = 'http://127.0.0.1:4100/relay/dash/manifest.mpd';
    expect(argv({ type: 'remux', manifest: 'dash', input: mpd, representation: '3', container: 'webm' })).toEqual([
      ...GLOBAL,
      ...NET(mpd, 'dash'),
      '-map',
      '0:m:id:3',
      '-c',
      'copy',
      '-f',
      'webm',
      `file:${OUT}`,
    ]);
  });

  test('a representation whose id an audio and a video representation share maps only the named kind', () => {
    const mpd = 'http://127.0.0.1:4100/relay/dash/manifest.mpd';
    expect(
      argv({
        type: 'remux',
        manifest: 'dash',
        input: mpd,
        representation: '318597',
        representationType: 'video',
        container: 'mp4',
      }),
    ).toEqual([
      ...GLOBAL,
      ...NET(mpd, 'dash'),
      '-map',
      '0:v:m:id:318597',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
    expect(
      argv({
        type: 'convert',
        input: mpd,
        manifest: 'dash',
        representation: '318597',
        representationType: 'audio',
        format: 'mp3',
        audioCodec: 'aac',
      }),
    ).toEqual([
      ...GLOBAL,
      ...NET(mpd, 'dash'),
      '-map',
      '0:a:m:id:318597',
      '-vn',
      '-c:a',
      'libmp3lame',
      '-q:a',
      '2',
      '-f',
      'mp3',
      `file:${OUT}`,
    ]);
  });

  test('a representation id that ffmpeg would parse as more than an id is refused', () => {
    expect(() => argv({ type: 'remux', manifest: 'dash', input: V, representation: 'a:b', container: 'mp4' })).toThrow(
      TypeError,
    );
    expect(() => argv({ type: 'remux', manifest: 'dash', input: V, representation: "it's", container: 'mp4' })).toThrow(
      TypeError,
    );
  });
});

describe('protocol and demuxer whitelists', () => {
  test('every input gets its own whitelists immediately before its -i', () => {
    const { args } = buildArgs(
      { type: 'merge', videoInput: '/in/v.mp4', audioInput: A, container: 'mp4' },
      { output: OUT },
    );
    const inputs = args.flatMap((arg, i) => (arg === '-i' ? [i] : []));
    expect(inputs).toHaveLength(2);
    expect(args.slice(inputs[0] - 4, inputs[0])).toEqual([
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      DEMUXERS.progressive,
    ]);
    expect(args.slice(inputs[1] - 4, inputs[1])).toEqual([
      '-protocol_whitelist',
      'http,tcp',
      '-format_whitelist',
      DEMUXERS.progressive,
    ]);
    expect(args.filter((a) => a === '-protocol_whitelist')).toHaveLength(2);
    expect(args.filter((a) => a === '-format_whitelist')).toHaveLength(2);
  });

  test('network inputs never get file, and local inputs never get a network protocol', () => {
    expect(inputArgs('http://127.0.0.1:1/x.m3u8', { kind: 'hls' })).toEqual([
      '-protocol_whitelist',
      'http,tcp',
      '-format_whitelist',
      DEMUXERS.hls,
      '-i',
      'http://127.0.0.1:1/x.m3u8',
    ]);
    expect(inputArgs('/tmp/x.m3u8', { kind: 'hls' })).toEqual([
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      DEMUXERS.hls,
      '-i',
      'file:/tmp/x.m3u8',
    ]);
    expect(inputArgs('/tmp/x.m3u8', { kind: 'hls', aes128: true })).toEqual([
      '-protocol_whitelist',
      'crypto,file',
      '-format_whitelist',
      DEMUXERS.hls,
      '-i',
      'file:/tmp/x.m3u8',
    ]);
  });

  test('no input may use https, tls or httpproxy: they would let a playlist dial an address past the proxy', () => {
    const all = [
      inputArgs('http://h/x.m3u8', { kind: 'hls', aes128: true }),
      inputArgs('http://h/x.mpd', { kind: 'dash' }),
      inputArgs('http://h/x.mp4'),
    ];
    for (const args of all) {
      const protocols = args[args.indexOf('-protocol_whitelist') + 1].split(',');
      expect(protocols.filter((p) => !['http', 'tcp', 'crypto'].includes(p))).toEqual([]);
    }
  });

  test('a progressive input may not be opened as a playlist, manifest or concat list', () => {
    const progressive = DEMUXERS.progressive.split(',');
    for (const name of ['hls', 'dash', 'concat', 'imf', 'image2', 'lavfi']) expect(progressive).not.toContain(name);
    expect(DEMUXERS.hls.split(',')).not.toContain('dash');
    expect(DEMUXERS.dash.split(',')).not.toContain('hls');
  });

  test('a relative path is read as a file even when it contains a colon after a slash', () => {
    expect(inputArgs('media/a:b.mp4')).toEqual([
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      DEMUXERS.progressive,
      '-i',
      'file:media/a:b.mp4',
    ]);
  });

  test.each([
    'https://example.com/a.mp4',
    'file:///etc/passwd',
    'concat:/a|/b',
    'data:text/plain,x',
    'subfile:,,start,0,end,0,,:/x',
    'a:b.mp4',
    '',
  ])('input %p is refused: ffmpeg reads the network only through the http proxy', (input) => {
    expect(() => inputArgs(input)).toThrow(TypeError);
  });

  test('the output must be a local path and is always last', () => {
    expect(() => buildArgs({ type: 'convert', input: V, format: 'mp3' }, { output: 'http://127.0.0.1/up' })).toThrow(
      TypeError,
    );
    const { args } = buildArgs(
      { type: 'convert', input: V, format: 'mp3' },
      { output: 'out/x.tmp', progressUrl: 'pipe:2' },
    );
    expect(args.at(-1)).toBe('file:out/x.tmp');
    expect(args.slice(0, 8)).toEqual([
      '-hide_banner',
      '-nostdin',
      '-y',
      '-loglevel',
      'error',
      '-progress',
      'pipe:2',
      '-nostats',
    ]);
  });

  test('an output size limit becomes -fs just before the output path', () => {
    const { args } = buildArgs(
      { type: 'convert', input: V, format: 'mp3' },
      { output: OUT, maxOutputBytes: 1_000_000 },
    );
    expect(args.slice(-3)).toEqual(['-fs', '1000000', `file:${OUT}`]);
  });
});

describe('request headers', () => {
  test("User-Agent and Referer use ffmpeg's options and the rest one -headers block, before -i", () => {
    const headers = {
      'User-Agent': 'Mozilla/5.0 test',
      Referer: 'https://site.example/watch',
      Cookie: 'a=1; b=2',
      Origin: 'https://site.example',
    };
    expect(inputArgs({ url: V, headers })).toEqual([
      '-protocol_whitelist',
      'http,tcp',
      '-format_whitelist',
      DEMUXERS.progressive,
      '-user_agent',
      'Mozilla/5.0 test',
      '-referer',
      'https://site.example/watch',
      '-headers',
      'Cookie: a=1; b=2\r\nOrigin: https://site.example\r\n',
      '-i',
      V,
    ]);
  });

  test('an input without headers gets no header options', () => {
    expect(inputArgs({ url: V })).toEqual(inputArgs(V));
    expect(inputArgs({ url: V, headers: {} })).toEqual(inputArgs(V));
  });

  test.each([
    [{ 'X-A': 'one\r\nHost: evil' }],
    [{ 'X-A': 'one\nX-B: two' }],
    [{ 'Bad Name': 'x' }],
    [{ Host: 'evil.example' }],
    [{ 'Proxy-Authorization': 'Basic eDp5' }],
    [{ Range: 'bytes=0-' }],
  ])('%p is refused', (headers) => {
    expect(() => inputArgs({ url: V, headers })).toThrow(TypeError);
  });

  test('a local input cannot carry headers', () => {
    expect(() => inputArgs({ url: '/in/x.mp4', headers: { Referer: 'x' } })).toThrow(TypeError);
  });

  test('headers of each input go with that input only', () => {
    const { inputArgs: built } = buildArgs(
      { type: 'merge', videoInput: { url: V, headers: { Referer: 'r1' } }, audioInput: { url: A }, container: 'mp4' },
      { output: OUT },
    );
    expect(built).toEqual([...NET(V).slice(0, 4), '-referer', 'r1', '-i', V, ...NET(A)]);
  });
});

describe('output format', () => {
  test('is the container of a merge or remux and the format of a convert', () => {
    expect(outputFormat({ type: 'merge', videoInput: V, audioInput: A, container: 'webm' })).toBe('webm');
    expect(outputFormat({ type: 'remux', manifest: 'hls', input: V, container: 'mkv' })).toBe('mkv');
    expect(outputFormat({ type: 'convert', input: V, format: 'opus' })).toBe('opus');
  });
});
