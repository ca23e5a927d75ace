import { describe, expect, test } from '@jest/globals';
import { buildArgs, inputArgs, outputFormat, type ConvertOperation, type MediaOperation } from '../src/operations.js';

const GLOBAL = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats'];
const OUT = '/data/tmp/job.part';
const V = 'http://127.0.0.1:4100/relay/v';
const A = 'http://127.0.0.1:4100/relay/a';
const NET = (url: string) => ['-protocol_whitelist', 'http,tcp', '-i', url];
const FILE = (path: string) => ['-protocol_whitelist', 'file', '-i', `file:${path}`];

function argv(op: MediaOperation): string[] {
  return buildArgs(op, { output: OUT }).args;
}

describe('merge', () => {
  test('into mp4 copies both streams and moves the index to the front', () => {
    expect(argv({ type: 'merge', videoInput: V, audioInput: A, container: 'mp4' })).toEqual([
      ...GLOBAL, ...NET(V), ...NET(A),
      '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('into webm copies both streams', () => {
    expect(argv({ type: 'merge', videoInput: V, audioInput: A, container: 'webm' })).toEqual([
      ...GLOBAL, ...NET(V), ...NET(A), '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-f', 'webm', `file:${OUT}`,
    ]);
  });

  test('into mkv copies both streams with the matroska muxer', () => {
    expect(argv({ type: 'merge', videoInput: '/in/v.mp4', audioInput: '/in/a.webm', container: 'mkv' })).toEqual([
      ...GLOBAL, ...FILE('/in/v.mp4'), ...FILE('/in/a.webm'), '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-f', 'matroska', `file:${OUT}`,
    ]);
  });

  test('returns its input and output parts separately, and the whole argv', () => {
    const built = buildArgs({ type: 'merge', videoInput: V, audioInput: A, container: 'mkv' }, { output: OUT });
    expect(built.inputArgs).toEqual([...NET(V), ...NET(A)]);
    expect(built.outputArgs).toEqual(['-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-f', 'matroska']);
    expect(built.args).toEqual([...GLOBAL, ...built.inputArgs, ...built.outputArgs, `file:${OUT}`]);
  });
});

describe('convert to an audio format', () => {
  const convert = (format: ConvertOperation['format'], audioCodec?: string): string[] =>
    argv({ type: 'convert', input: V, format, audioCodec });
  const AUDIO = ['-map', '0:a:0', '-vn'];

  test('mp3 encodes with LAME at VBR quality 2', () => {
    expect(convert('mp3', 'aac')).toEqual([...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'libmp3lame', '-q:a', '2', '-f', 'mp3', `file:${OUT}`]);
  });

  test('mp3 copies audio that already is mp3', () => {
    expect(convert('mp3', 'mp3')).toEqual([...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'copy', '-f', 'mp3', `file:${OUT}`]);
  });

  test('m4a encodes AAC at 192k into an M4A with faststart', () => {
    expect(convert('m4a', 'opus')).toEqual([
      ...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart', '-f', 'ipod', `file:${OUT}`,
    ]);
  });

  test('m4a copies audio that already is AAC', () => {
    expect(convert('m4a', 'mp4a.40.2')).toEqual([
      ...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'copy', '-movflags', '+faststart', '-f', 'ipod', `file:${OUT}`,
    ]);
  });

  test('opus encodes libopus at 128k into Ogg', () => {
    expect(convert('opus')).toEqual([...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'libopus', '-b:a', '128k', '-f', 'opus', `file:${OUT}`]);
  });

  test('opus copies audio that already is Opus', () => {
    expect(convert('opus', 'opus')).toEqual([...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'copy', '-f', 'opus', `file:${OUT}`]);
  });

  test('wav always writes 16-bit PCM', () => {
    expect(convert('wav', 'pcm_s16le')).toEqual([...GLOBAL, ...NET(V), ...AUDIO, '-c:a', 'pcm_s16le', '-f', 'wav', `file:${OUT}`]);
  });
});

describe('convert to a container', () => {
  const MAPS = ['-map', '0:v:0?', '-map', '0:a:0?'];
  const X264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p'];
  const VP9 = ['-c:v', 'libvpx-vp9', '-crf', '32', '-b:v', '0', '-row-mt', '1', '-deadline', 'good', '-cpu-used', '4', '-pix_fmt', 'yuv420p'];
  const convert = (format: ConvertOperation['format'], videoCodec?: string, audioCodec?: string): string[] =>
    argv({ type: 'convert', input: '/in/x', format, videoCodec, audioCodec });

  test('mp4 remuxes when both codecs fit', () => {
    expect(convert('mp4', 'avc1.64001f', 'mp4a.40.2')).toEqual([
      ...GLOBAL, ...FILE('/in/x'), ...MAPS, '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('mp4 encodes only the audio when the video fits', () => {
    expect(convert('mp4', 'h264', 'opus')).toEqual([
      ...GLOBAL, ...FILE('/in/x'), ...MAPS, '-c:v', 'copy', '-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('mp4 encodes only the video when the audio fits', () => {
    expect(convert('mp4', 'vp9', 'aac')).toEqual([
      ...GLOBAL, ...FILE('/in/x'), ...MAPS, ...X264, '-c:a', 'copy', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('mp4 encodes both streams when the codecs are unknown', () => {
    expect(convert('mp4')).toEqual([
      ...GLOBAL, ...FILE('/in/x'), ...MAPS, ...X264, '-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('webm remuxes when both codecs fit', () => {
    expect(convert('webm', 'vp09.00.10.08', 'opus')).toEqual([...GLOBAL, ...FILE('/in/x'), ...MAPS, '-c', 'copy', '-f', 'webm', `file:${OUT}`]);
  });

  test('webm encodes VP9 and Opus for H.264 and AAC', () => {
    expect(convert('webm', 'h264', 'aac')).toEqual([
      ...GLOBAL, ...FILE('/in/x'), ...MAPS, ...VP9, '-c:a', 'libopus', '-b:a', '128k', '-f', 'webm', `file:${OUT}`,
    ]);
  });

  test('webm encodes only the audio when the video fits', () => {
    expect(convert('webm', 'av1', 'aac')).toEqual([
      ...GLOBAL, ...FILE('/in/x'), ...MAPS, '-c:v', 'copy', '-c:a', 'libopus', '-b:a', '128k', '-f', 'webm', `file:${OUT}`,
    ]);
  });

  test('mkv copies any codecs, known or not', () => {
    expect(convert('mkv', 'theora', 'flac')).toEqual([...GLOBAL, ...FILE('/in/x'), ...MAPS, '-c', 'copy', '-f', 'matroska', `file:${OUT}`]);
    expect(convert('mkv')).toEqual(convert('mkv', 'theora', 'flac'));
  });
});

describe('remux', () => {
  test('an HLS playlist into mp4 copies its streams and rewraps ADTS AAC', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mp4', audioCodec: 'mp4a.40.2' })).toEqual([
      ...GLOBAL, ...NET(url),
      '-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('an HLS playlist with unknown or non-AAC audio gets no bitstream filter', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    const expected = [...GLOBAL, ...NET(url), '-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`];
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mp4' })).toEqual(expected);
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mp4', audioCodec: 'mp3' })).toEqual(expected);
  });

  test('an HLS playlist into mkv needs no bitstream filter or faststart', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    expect(argv({ type: 'remux', manifest: 'hls', input: url, container: 'mkv', audioCodec: 'aac' })).toEqual([
      ...GLOBAL, ...NET(url), '-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy', '-f', 'matroska', `file:${OUT}`,
    ]);
  });

  test('AES-128 HLS also allows the crypto protocol, for that input only', () => {
    const url = 'http://127.0.0.1:4100/relay/hls/index.m3u8';
    expect(buildArgs({ type: 'remux', manifest: 'hls', input: url, container: 'mkv', aes128: true }, { output: OUT }).inputArgs).toEqual([
      '-protocol_whitelist', 'crypto,http,tcp', '-i', url,
    ]);
  });

  test('a video and an audio playlist into mp4 map one stream from each', () => {
    expect(argv({ type: 'remux', manifest: 'hls', videoInput: V, audioInput: A, container: 'mp4', audioCodec: 'aac' })).toEqual([
      ...GLOBAL, ...NET(V), ...NET(A),
      '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('a DASH representation pair is picked by representation id', () => {
    const mpd = 'http://127.0.0.1:4100/relay/dash/manifest.mpd';
    expect(
      argv({ type: 'remux', manifest: 'dash', videoInput: mpd, audioInput: mpd, videoRepresentation: 'v1080', audioRepresentation: 'a-en=128000', container: 'mp4', audioCodec: 'aac' }),
    ).toEqual([
      ...GLOBAL, ...NET(mpd), ...NET(mpd),
      '-map', '0:m:id:v1080', '-map', '1:m:id:a-en=128000', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', `file:${OUT}`,
    ]);
  });

  test('a single DASH representation is picked by its id', () => {
    const mpd = 'http://127.0.0.1:4100/relay/dash/manifest.mpd';
    expect(argv({ type: 'remux', manifest: 'dash', input: mpd, representation: '3', container: 'webm' })).toEqual([
      ...GLOBAL, ...NET(mpd), '-map', '0:m:id:3', '-c', 'copy', '-f', 'webm', `file:${OUT}`,
    ]);
  });

  test('a representation id that ffmpeg would parse as more than an id is refused', () => {
    expect(() => argv({ type: 'remux', manifest: 'dash', input: V, representation: 'a:b', container: 'mp4' })).toThrow(TypeError);
    expect(() => argv({ type: 'remux', manifest: 'dash', input: V, representation: "it's", container: 'mp4' })).toThrow(TypeError);
  });
});

describe('protocol whitelist', () => {
  test('every input gets its own whitelist immediately before its -i', () => {
    const { args } = buildArgs({ type: 'merge', videoInput: '/in/v.mp4', audioInput: A, container: 'mp4' }, { output: OUT });
    const inputs = args.flatMap((arg, i) => (arg === '-i' ? [i] : []));
    expect(inputs).toHaveLength(2);
    for (const i of inputs) expect(args[i - 2]).toBe('-protocol_whitelist');
    expect(args[inputs[0] - 1]).toBe('file');
    expect(args[inputs[1] - 1]).toBe('http,tcp');
    expect(args.filter((a) => a === '-protocol_whitelist')).toHaveLength(2);
  });

  test('network inputs never get file, and local inputs never get a network protocol', () => {
    expect(inputArgs('http://127.0.0.1:1/x.m3u8')).toEqual(['-protocol_whitelist', 'http,tcp', '-i', 'http://127.0.0.1:1/x.m3u8']);
    expect(inputArgs('/tmp/x.m3u8')).toEqual(['-protocol_whitelist', 'file', '-i', 'file:/tmp/x.m3u8']);
    expect(inputArgs('/tmp/x.m3u8', { aes128: true })).toEqual(['-protocol_whitelist', 'crypto,file', '-i', 'file:/tmp/x.m3u8']);
  });

  test('a relative path is read as a file even when it contains a colon after a slash', () => {
    expect(inputArgs('media/a:b.mp4')).toEqual(['-protocol_whitelist', 'file', '-i', 'file:media/a:b.mp4']);
  });

  test.each(['https://example.com/a.mp4', 'file:///etc/passwd', 'concat:/a|/b', 'data:text/plain,x', 'subfile:,,start,0,end,0,,:/x', 'a:b.mp4', ''])(
    'input %p is refused: ffmpeg reads the network only through the http relay',
    (input) => {
      expect(() => inputArgs(input)).toThrow(TypeError);
    },
  );

  test('the output must be a local path and is always last', () => {
    expect(() => buildArgs({ type: 'convert', input: V, format: 'mp3' }, { output: 'http://127.0.0.1/up' })).toThrow(TypeError);
    const { args } = buildArgs({ type: 'convert', input: V, format: 'mp3' }, { output: 'out/x.tmp', progressUrl: 'pipe:2' });
    expect(args.at(-1)).toBe('file:out/x.tmp');
    expect(args.slice(0, 8)).toEqual(['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:2', '-nostats']);
  });
});

describe('output format', () => {
  test('is the container of a merge or remux and the format of a convert', () => {
    expect(outputFormat({ type: 'merge', videoInput: V, audioInput: A, container: 'webm' })).toBe('webm');
    expect(outputFormat({ type: 'remux', manifest: 'hls', input: V, container: 'mkv' })).toBe('mkv');
    expect(outputFormat({ type: 'convert', input: V, format: 'opus' })).toBe('opus');
  });
});
