// The one "choose a source" of DESIGN.md's one-step downloads: given a media item and a preset, the
// source or video+audio pair to download, or what exists when nothing fits. The gateway's page_url
// downloads, the CLI and the web app all call this, so "best" means the same everywhere.
import { z } from 'zod';
import type { MediaItem, Source } from './extract.js';

export const QualitySchema = z.enum(['best', 'worst', '2160p', '1440p', '1080p', '720p', '480p', '360p', '240p']);
export type Quality = z.infer<typeof QualitySchema>;

const CONTAINERS = new Set(['mp4', 'webm', 'mkv']);
const AUDIO_OUT = new Set(['mp3', 'm4a', 'opus', 'wav']);

export interface Preset {
  quality?: Quality;
  audio_only?: boolean;
  /** The asked output format (DownloadRequest's `format`): an audio format implies audio_only. */
  format?: string;
}

export type SourcePick =
  { kind: 'source'; source: Source; quality: string } | { kind: 'pair'; video: Source; audio: Source; quality: string };
export type SourceChoice = SourcePick | { kind: 'none'; reason: string; available: string[] };

/** The height a quality caps at: Infinity for best, 0 for worst (take the lowest). */
export function qualityHeight(quality: Quality): number {
  if (quality === 'best') return Infinity;
  if (quality === 'worst') return 0;
  return Number(quality.slice(0, -1));
}

const MANIFEST = new Set(['hls', 'dash']);
const isImage = (s: Source) => s.stream_profile === 'image';
const hasVideo = (s: Source) => s.stream_profile !== 'audio_only' && !isImage(s) && s.has_video !== false;
const hasAudio = (s: Source) => s.stream_profile !== 'video_only' && !isImage(s) && s.has_audio !== false;
const isVideoOnly = (s: Source) => s.stream_profile === 'video_only' || (hasVideo(s) && s.has_audio === false);
const isAudioOnly = (s: Source) => s.stream_profile === 'audio_only' || (hasAudio(s) && s.has_video === false);
// A merge reads two files or two manifests, never one of each (the download refuses such a pair).
const sameKind = (a: Source, b: Source) => MANIFEST.has(a.stream_profile) === MANIFEST.has(b.stream_profile);

// RFC 6381 sample entries (and plain names) → the codec; enough to tell which container takes it.
const CODEC: Record<string, string> = {
  avc1: 'h264',
  avc3: 'h264',
  h264: 'h264',
  hvc1: 'hevc',
  hev1: 'hevc',
  hevc: 'hevc',
  av01: 'av1',
  av1: 'av1',
  vp09: 'vp9',
  vp9: 'vp9',
  vp08: 'vp8',
  vp8: 'vp8',
  mp4a: 'aac',
  aac: 'aac',
  opus: 'opus',
  vorbis: 'vorbis',
  mp3: 'mp3',
  'ac-3': 'ac3',
  'ec-3': 'eac3',
};
const FAMILY: Record<string, ReadonlySet<string>> = {
  mp4: new Set(['h264', 'hevc', 'av1', 'aac', 'ac3', 'eac3']),
  webm: new Set(['vp8', 'vp9', 'av1', 'opus', 'vorbis']),
  m4a: new Set(['aac']),
  mp3: new Set(['mp3']),
  opus: new Set(['opus']),
};
const OWN_EXT: Record<string, ReadonlySet<string>> = {
  mp4: new Set(['mp4', 'm4v']),
  webm: new Set(['webm']),
  m4a: new Set(['m4a']),
  mp3: new Set(['mp3']),
  opus: new Set(['opus']),
};

function codecsOf(s: Source): string[] | undefined {
  const parts = (s.codecs ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter(Boolean);
  if (parts.length === 0) return undefined;
  return parts.map((c) =>
    c.startsWith('mp4a.') && /^mp4a\.(69|6b|40\.34)$/.test(c) ? 'mp3' : (CODEC[c] ?? CODEC[c.split('.')[0]] ?? c),
  );
}

/** Whether the asked format takes this source as it is (a stream copy, no re-encode). No format: yes. */
export function fitsFormat(s: Source, format: string | undefined): boolean {
  if (format === undefined || format === 'mkv') return true;
  const family = FAMILY[format];
  if (!family) return false; // wav: always encoded
  const codecs = codecsOf(s);
  if (codecs) return codecs.every((c) => family.has(c));
  return s.ext !== undefined && (OWN_EXT[format]?.has(s.ext.toLowerCase()) ?? false);
}

/** What a person reads of a source: "1280x720 video with audio (mp4)", "128k audio (hls)". */
export function describeSource(s: Source): string {
  const kind = isImage(s) ? 'image' : isVideoOnly(s) ? 'video' : isAudioOnly(s) ? 'audio' : 'video with audio';
  const size =
    s.width && s.height
      ? `${s.width}x${s.height}`
      : s.height
        ? `${s.height}p`
        : s.quality !== 'original'
          ? s.quality
          : '';
  const how = MANIFEST.has(s.stream_profile) ? s.stream_profile : (s.ext ?? s.codecs);
  return `${size ? `${size} ` : ''}${kind}${how ? ` (${how})` : ''}`;
}

/**
 * What a pick is, for a person: "640x360 video (mp4) + 128k audio (m4a), merged", "video with audio
 * (mp4)". Printable ASCII only and bounded, since it also travels as a header (Reelay-Source-Description)
 * and the parts come from what an origin said.
 */
export function describePick(pick: SourcePick): string {
  const text =
    pick.kind === 'pair'
      ? `${describeSource(pick.video)} + ${describeSource(pick.audio)}, merged`
      : describeSource(pick.source);
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

/** The label a pick is named by (Reelay-Source-Quality, the Job's source.quality): 720p, 128k, original. */
export function qualityLabel(s: Source): string {
  return !isAudioOnly(s) && s.height ? `${s.height}p` : s.quality;
}

// Higher is better; unknown numbers rank below every known one.
const num = (v: number | undefined) => v ?? -1;
const byAudio = (format: string | undefined) => (a: Source, b: Source) =>
  Number(fitsFormat(b, format)) - Number(fitsFormat(a, format)) || num(b.bitrate) - num(a.bitrate);
const best = <T>(list: T[], order: (a: T, b: T) => number): T | undefined => [...list].sort(order)[0];

interface Candidate {
  video: Source;
  audio?: Source;
}

function candidates(sources: Source[]): Candidate[] {
  const audios = sources.filter(isAudioOnly);
  const list: Candidate[] = [];
  for (const video of sources.filter(hasVideo)) {
    if (!isVideoOnly(video)) {
      list.push({ video });
      continue;
    }
    const audio = best(
      audios.filter((a) => sameKind(a, video)),
      byAudio(undefined),
    );
    if (audio) list.push({ video, audio });
  }
  if (list.length > 0) return list;
  // Nothing with sound at all: a silent video is still better than nothing.
  return sources.filter(hasVideo).map((video) => ({ video }));
}

function pick(c: Candidate): SourcePick {
  const quality = qualityLabel(c.video);
  return c.audio
    ? { kind: 'pair', video: c.video, audio: c.audio, quality }
    : { kind: 'source', source: c.video, quality };
}

function none(sources: Source[], reason: string): SourceChoice {
  return { kind: 'none', reason, available: sources.map(describeSource) };
}

/**
 * The preset's choice for one item. audio_only (or an audio format): the best audio-only source, else
 * the best source that carries audio. Otherwise the best muxed source or video+audio pair whose height
 * is at most `quality` (none that low: the lowest), preferring at one height what the asked format
 * takes without re-encoding, then the higher bitrate, then one file over a merge.
 */
export function chooseSource(item: Pick<MediaItem, 'sources'>, preset: Preset = {}): SourceChoice {
  const { sources } = item;
  const format = preset.format;
  if (preset.audio_only || (format !== undefined && AUDIO_OUT.has(format))) {
    if (format !== undefined && !AUDIO_OUT.has(format))
      return none(sources, `audio_only writes audio: ask for mp3, m4a, opus or wav, not ${format}.`);
    const audio = best(sources.filter(isAudioOnly), byAudio(format)) ?? best(sources.filter(hasAudio), byAudio(format));
    if (!audio) return none(sources, 'this item has no audio.');
    return { kind: 'source', source: audio, quality: audio.quality };
  }
  const list = candidates(sources);
  if (list.length === 0) {
    const image = best(sources.filter(isImage), (a, b) => num(b.width) * num(b.height) - num(a.width) * num(a.height));
    if (image)
      return format === undefined
        ? { kind: 'source', source: image, quality: qualityLabel(image) }
        : none(sources, `an image is delivered as it is, not as ${format}.`);
    const audio = best(sources.filter(hasAudio), byAudio(format));
    if (audio && (format === undefined || !CONTAINERS.has(format)))
      return { kind: 'source', source: audio, quality: audio.quality };
    return none(
      sources,
      format ? `this item has no video to write as ${format}.` : 'this item has nothing to download.',
    );
  }
  const cap = qualityHeight(preset.quality ?? 'best');
  const height = (c: Candidate) => c.video.height;
  const fits = (c: Candidate) =>
    Number(fitsFormat(c.video, format) && (c.audio === undefined || fitsFormat(c.audio, format)));
  const rank = (a: Candidate, b: Candidate) =>
    fits(b) - fits(a) ||
    num(b.video.bitrate) - num(a.video.bitrate) ||
    num(b.video.fps) - num(a.video.fps) ||
    Number(a.audio !== undefined) - Number(b.audio !== undefined);
  // Unknown heights count as within any cap, ranked below every known one.
  const within = list.filter((c) => height(c) === undefined || height(c)! <= cap);
  const lowest = (c: Candidate[]) => best(c, (a, b) => (height(a) ?? Infinity) - (height(b) ?? Infinity) || rank(a, b));
  const chosen =
    cap === 0 || within.length === 0
      ? lowest(list)
      : best(within, (a, b) => num(height(b)) - num(height(a)) || rank(a, b));
  return pick(chosen!);
}
