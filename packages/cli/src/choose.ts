// What `reelay get` downloads, chosen like yt-dlp's default "bestvideo*+bestaudio/best": the best
// video (by height, then bitrate, then fps) and, when that is video only, the best audio to merge
// with it; `-q 720p` caps the height; an audio format takes the best audio source alone.
import type { DownloadBody, ExtractResult, MediaItem, Source } from './api.js';
import { CliError, UsageError } from './errors.js';

export const AUDIO_FORMATS = ['mp3', 'm4a', 'opus', 'wav'];
export const VIDEO_FORMATS = ['mp4', 'webm', 'mkv'];

export interface Choice {
  body: DownloadBody;
  /** What was picked, for a person: "640x360 video + 64k audio, merged". */
  label: string;
}

/** `best`, `720`, `720p` → the highest height allowed (Infinity for best). */
export function parseQuality(raw: string): number {
  if (raw === 'best') return Infinity;
  const m = /^(\d{2,5})p?$/i.exec(raw.trim());
  if (!m) throw new UsageError(`-q takes a height such as 720p or best, not "${raw}".`);
  return Number(m[1]);
}

const MANIFEST = new Set(['hls', 'dash']);
const hasVideo = (s: Source) => s.stream_profile !== 'audio_only' && s.stream_profile !== 'image' && s.has_video !== false;
const hasAudio = (s: Source) => s.stream_profile !== 'video_only' && s.stream_profile !== 'image' && s.has_audio !== false;
const videoOnly = (s: Source) => s.stream_profile === 'video_only' || (hasVideo(s) && s.has_audio === false);
const audioOnly = (s: Source) => s.stream_profile === 'audio_only' || (hasAudio(s) && s.has_video === false);
// A merge takes two files or two manifests, never one of each (the server refuses that pair).
const sameKind = (a: Source, b: Source) => MANIFEST.has(a.stream_profile) === MANIFEST.has(b.stream_profile);

/** Higher is better: unknown numbers rank below any known one. */
const byVideo = (a: Source, b: Source) => (b.height ?? -1) - (a.height ?? -1) || (b.bitrate ?? -1) - (a.bitrate ?? -1) || (b.fps ?? -1) - (a.fps ?? -1);
const byAudio = (a: Source, b: Source) => (b.bitrate ?? -1) - (a.bitrate ?? -1);
const byPixels = (a: Source, b: Source) => (b.width ?? 0) * (b.height ?? 0) - (a.width ?? 0) * (a.height ?? 0);
const best = (sources: Source[], order: (a: Source, b: Source) => number) => [...sources].sort(order)[0] as Source | undefined;

function describe(s: Source): string {
  const kind = videoOnly(s) ? 'video' : audioOnly(s) ? 'audio' : s.stream_profile === 'image' ? 'image' : 'video with audio';
  // What is known of it: its size or quality label, else its container and codecs.
  const known = s.width && s.height ? `${s.width}x${s.height}` : s.quality !== 'original' ? s.quality : (s.ext ?? '');
  const codecs = s.codecs ? ` (${s.codecs})` : '';
  return `${known ? `${known} ` : ''}${kind}${MANIFEST.has(s.stream_profile) ? ` (${s.stream_profile})` : codecs}`;
}

export function chooseSource(item: MediaItem, options: { format?: string; quality?: string } = {}): Choice {
  const { format } = options;
  const maxHeight = parseQuality(options.quality ?? 'best');
  const sources = item.sources;
  if (format && AUDIO_FORMATS.includes(format)) {
    // Audio alone first (no video to throw away), else the best source that carries audio.
    const audio = best(sources.filter(audioOnly), byAudio) ?? best(sources.filter(hasAudio), byAudio);
    if (!audio) throw new CliError(`this media has no audio to convert to ${format}.`, 'Leave out -f to download the video.');
    return { body: { url: audio.url, format }, label: `${describe(audio)} → ${format}` };
  }
  const videos = sources.filter((s) => hasVideo(s) && (s.height === undefined || s.height <= maxHeight));
  const video = best(videos, byVideo);
  if (!video) {
    const image = best(sources.filter((s) => s.stream_profile === 'image'), byPixels);
    if (image && !format) return { body: { url: image.url }, label: describe(image) };
    const audio = best(sources.filter(hasAudio), byAudio);
    if (audio && maxHeight === Infinity) return { body: { url: audio.url, ...(format ? { format } : {}) }, label: describe(audio) };
    throw new CliError(maxHeight === Infinity ? 'this media has nothing to download.' : `no video at or below ${maxHeight}p.`, 'See what there is with `reelay extract URL`; try a larger -q or leave it out.');
  }
  const extra = format ? { format } : {};
  if (videoOnly(video)) {
    const audio = best(sources.filter((s) => audioOnly(s) && sameKind(s, video)), byAudio);
    if (audio) return { body: { video_url: video.url, audio_url: audio.url, ...extra }, label: `${describe(video)} + ${describe(audio)}, merged` };
    // No audio to pair with: the best source that has both, if it is no worse than the silent video.
    const muxed = best(videos.filter((s) => !videoOnly(s)), byVideo);
    if (muxed) return { body: { url: muxed.url, ...extra }, label: describe(muxed) };
  }
  return { body: { url: video.url, ...extra }, label: describe(video) };
}

/** The first media item's choice: a page with several items (a gallery) yields its first one. */
export function choose(result: ExtractResult, options: { format?: string; quality?: string } = {}): Choice {
  const item = result.media[0];
  if (!item) throw new CliError('the server found no media on this page.');
  return chooseSource(item, options);
}
