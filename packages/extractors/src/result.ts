// The one place every extraction becomes an ExtractResult: sources de-duplicated across the result,
// labelled, sorted best first, items indexed, the content type derived, and the whole checked
// against the zod contract. Extractors only fill drafts.
import { ExtractResultSchema, ReelayError, type ExtractResult, type MediaItem, type Source } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import type { Extraction, MediaDraft, ResultDraft, SourceDraft, SourceRecord } from './types.js';
import { nonNegative, positiveInt } from './values.js';

const PROTOCOL_RANK: Record<Source['stream_profile'], number> = {
  muxed_progressive: 0,
  video_only: 0,
  audio_only: 0,
  image: 0,
  hls: 1,
  dash: 2,
};

export function qualityLabel(source: SourceDraft): string {
  if (source.stream_profile === 'image') {
    return source.width && source.height ? `${source.width}x${source.height}` : 'original';
  }
  const audioOnly = source.stream_profile === 'audio_only' || source.has_video === false;
  if (!audioOnly) {
    const res = source.width && source.height ? Math.min(source.width, source.height) : source.height;
    if (res) return `${res}p`;
  }
  if (source.bitrate) return `${Math.max(1, Math.round(source.bitrate / 1000))}k`;
  return 'original';
}

function hasVideo(s: SourceDraft): boolean {
  if (s.stream_profile === 'audio_only' || s.stream_profile === 'image') return false;
  return s.has_video !== false;
}

function resolution(s: SourceDraft): number {
  return s.width && s.height ? Math.min(s.width, s.height) : (s.height ?? 0);
}

/** Best first: video before audio-only, higher resolution, muxed before split, higher bitrate, progressive before manifests. */
export function compareSources(a: SourceDraft, b: SourceDraft): number {
  return (
    Number(hasVideo(b)) - Number(hasVideo(a)) ||
    resolution(b) - resolution(a) ||
    (b.width ?? 0) * (b.height ?? 0) - (a.width ?? 0) * (a.height ?? 0) ||
    Number(b.has_audio !== false) - Number(a.has_audio !== false) ||
    (b.bitrate ?? 0) - (a.bitrate ?? 0) ||
    PROTOCOL_RANK[a.stream_profile] - PROTOCOL_RANK[b.stream_profile] ||
    (b.size ?? 0) - (a.size ?? 0)
  );
}

function toSource(d: SourceDraft): Source {
  const source: Source = { quality: d.quality || qualityLabel(d), url: d.url, stream_profile: d.stream_profile };
  if (d.mime_type) source.mime_type = d.mime_type;
  if (d.ext) source.ext = d.ext;
  const width = positiveInt(d.width);
  const height = positiveInt(d.height);
  const bitrate = positiveInt(d.bitrate);
  if (width) source.width = width;
  if (height) source.height = height;
  if (bitrate) source.bitrate = bitrate;
  if (d.codecs) source.codecs = d.codecs;
  const size = typeof d.size === 'number' && Number.isFinite(d.size) && d.size >= 0 ? Math.round(d.size) : undefined;
  if (size !== undefined) source.size = size;
  if (d.has_audio !== undefined) source.has_audio = d.has_audio;
  if (d.has_video !== undefined) source.has_video = d.has_video;
  if (d.fps && Number.isFinite(d.fps) && d.fps > 0) source.fps = d.fps;
  if (d.language) source.language = d.language;
  return source;
}

function fallbackTitle(url: string): string {
  try {
    const u = new URL(url);
    const last = decodeURIComponent(u.pathname.split('/').filter(Boolean).pop() ?? '');
    return last || u.hostname;
  } catch {
    return url;
  }
}

/**
 * Why a source could never be downloaded: its URL is not http(s) or names a blocked address literally
 * (a DASH BaseURL of file:///etc/passwd or http://10.0.0.1/, an HLS variant at 169.254.169.254).
 * The download would refuse it, so it is not offered. Names are resolved only when fetched.
 */
function unfetchable(url: string, egress: Pick<Egress, 'assertUrlAllowed'>): ReelayError | undefined {
  try {
    egress.assertUrlAllowed(new URL(url));
    return undefined;
  } catch (err) {
    if (err instanceof ReelayError) return err;
    return new ReelayError('url_blocked', 'The source URL cannot be parsed.');
  }
}

/**
 * Assembles, validates and records a draft. With `egress`, sources it would refuse are dropped
 * first. Throws no_media_found when nothing is left (url_blocked when only refused sources were).
 */
export function buildResult(draft: ResultDraft, egress?: Pick<Egress, 'assertUrlAllowed'>): Extraction {
  const seen = new Set<string>();
  const items: { draft: MediaDraft; sources: SourceDraft[] }[] = [];
  let refused: ReelayError | undefined;
  for (const item of draft.media) {
    const sources: SourceDraft[] = [];
    for (const s of item.sources) {
      if (!s.url || seen.has(s.url)) continue;
      const refusal = egress && unfetchable(s.url, egress);
      if (refusal) {
        refused ??= refusal;
        continue;
      }
      seen.add(s.url);
      sources.push(s);
    }
    if (sources.length) items.push({ draft: item, sources: sources.sort(compareSources) });
  }
  if (items.length === 0) throw refused ?? new ReelayError('no_media_found', 'No downloadable media was found at this URL.');

  const title = (draft.title?.trim() || items[0].draft.title?.trim() || fallbackTitle(draft.url)).slice(0, 500);
  const records: SourceRecord[] = [];
  const media: MediaItem[] = items.map(({ draft: item, sources }, index) => {
    const out: MediaItem = { index, type: item.type, sources: sources.map(toSource) };
    if (item.thumbnail) out.thumbnail = item.thumbnail;
    const duration = nonNegative(item.duration);
    if (duration !== undefined) out.duration = Math.round(duration * 1000) / 1000;
    if (item.title && items.length > 1) out.title = item.title.slice(0, 500);
    for (const [i, s] of sources.entries()) {
      const pub = out.sources[i];
      records.push({
        url: pub.url,
        stream_profile: pub.stream_profile,
        media_index: index,
        media_type: item.type,
        title: item.title?.trim() || title,
        headers: s.headers,
        mime_type: pub.mime_type,
        ext: pub.ext,
        codecs: pub.codecs,
        has_audio: pub.has_audio,
        has_video: pub.has_video,
        size: pub.size,
        duration: out.duration,
      });
    }
    return out;
  });
  const result: ExtractResult = {
    url: draft.url,
    platform: draft.platform,
    extract_profile: draft.extract_profile,
    content_type: draft.content_type ?? (media.length > 1 ? 'gallery' : media[0].type),
    title,
    media,
  };
  const checked = ExtractResultSchema.safeParse(result);
  if (!checked.success) {
    throw new ReelayError('internal_error', `Extractor ${draft.extract_profile} produced an invalid result: ${checked.error.issues[0]?.message}`);
  }
  return { result, records };
}
