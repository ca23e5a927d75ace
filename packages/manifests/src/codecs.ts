// Reading RFC 6381 codec strings (HLS CODECS, DASH @codecs): which entries are video, audio or
// neither, so manifests can tell muxed, video-only and audio-only streams apart.

const VIDEO = new Set([
  'avc1',
  'avc2',
  'avc3',
  'avc4',
  'h264',
  'hev1',
  'hvc1',
  'hevc',
  'h265',
  'dvh1',
  'dvhe',
  'dva1',
  'dvav',
  'dav1',
  'av01',
  'av1',
  'vp8',
  'vp08',
  'vp9',
  'vp09',
  'mp4v',
  'theora',
  'h263',
  's263',
  'vc-1',
  'wvc1',
  'vvc1',
  'vvi1',
  'avs2',
]);

const AUDIO = new Set([
  'mp4a',
  'mp3',
  'aac',
  'ac-3',
  'ac3',
  'ec-3',
  'eac3',
  'ac-4',
  'opus',
  'vorbis',
  'flac',
  'alac',
  'dtsc',
  'dtse',
  'dtsh',
  'dtsl',
  'dtsx',
  'dts+',
  'dts-',
  'mha1',
  'mha2',
  'mhm1',
  'mhm2',
  'pcm',
  'lpcm',
  'ipcm',
  'fpcm',
  'ulaw',
  'alaw',
  'samr',
  'sawb',
]);

export interface CodecParts {
  video: string[];
  audio: string[];
  /** Text, image and unrecognised entries (wvtt, stpp, ...). */
  other: string[];
}

/** Splits a codecs list ("avc1.64001f,mp4a.40.2") into its video, audio and other entries. */
export function splitCodecs(codecs: string | undefined): CodecParts {
  const parts: CodecParts = { video: [], audio: [], other: [] };
  for (const raw of (codecs ?? '').split(',')) {
    const codec = raw.trim();
    if (!codec) continue;
    // Opus and FLAC are registered with capitals (Opus, fLaC), hence the case-folding.
    const family = codec.split('.')[0].toLowerCase();
    if (VIDEO.has(family)) parts.video.push(codec);
    else if (AUDIO.has(family)) parts.audio.push(codec);
    else parts.other.push(codec);
  }
  return parts;
}
