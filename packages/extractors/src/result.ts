// The one place every extraction becomes an ExtractResult: sources de-duplicated across the result,
// labelled, sorted best first, items indexed, the content type derived, and the whole checked
// against the zod contract. Extractors only fill drafts.
import { ExtractResultSchema, ReelayError, type ExtractResult, type MediaItem, type Source } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import { assembleSubtitles, MAX_RESULT_SUBTITLES } from './subtitles.js';
import type { Extraction, MediaDraft, ResultDraft, SourceDraft, SourceRecord, SubtitleRecord } from './types.js';
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

export function toSource(d: SourceDraft): Source {
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
  if (d.is_live === true) source.is_live = true;
  return source;
}

/** A title from a URL's last path segment (else its host), for results whose page names none. */
export function fallbackTitle(url: string): string {
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
export function unfetchable(url: string, egress: Pick<Egress, 'assertUrlAllowed'>): ReelayError | undefined {
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
  if (items.length === 0)
    throw refused ?? new ReelayError('no_media_found', 'No downloadable media was found at this URL.');

  const title = (draft.title?.trim() || items[0].draft.title?.trim() || fallbackTitle(draft.url)).slice(0, 500);
  const records: SourceRecord[] = [];
  const subtitleRecords: SubtitleRecord[] = [];
  const refusedUrl = (url: string) => egress !== undefined && unfetchable(url, egress) !== undefined;
  const media: MediaItem[] = items.map(({ draft: item, sources }, index) => {
    const out: MediaItem = { index, type: item.type, sources: sources.map(toSource) };
    if (item.thumbnail) out.thumbnail = item.thumbnail;
    // A live item has no length yet (what a playlist lists is a moving window), and all of it is live.
    const live = item.is_live === true || out.sources.some((s) => s.is_live);
    const duration = live ? undefined : nonNegative(item.duration);
    if (duration !== undefined) out.duration = Math.round(duration * 1000) / 1000;
    if (live) {
      out.is_live = true;
      for (const s of out.sources) s.is_live = true;
    }
    if (item.title && items.length > 1) out.title = item.title.slice(0, 500);
    Object.assign(out, describing({ ...draft.describing, ...defined(item) }));
    const subs = assembleSubtitles(item.subtitles, seen, refusedUrl, MAX_RESULT_SUBTITLES - subtitleRecords.length);
    if (subs.subtitles.length) out.subtitles = subs.subtitles;
    for (const r of subs.records)
      subtitleRecords.push({ ...r, media_index: index, title: item.title?.trim() || title });
    for (const [i, s] of sources.entries()) {
      const pub = out.sources[i];
      records.push(
        sourceRecord(
          pub,
          s.headers,
          { media_index: index, title: item.title?.trim() || title, page_url: draft.url },
          out,
        ),
      );
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
    throw new ReelayError(
      'internal_error',
      `Extractor ${draft.extract_profile} produced an invalid result: ${checked.error.issues[0]?.message}`,
    );
  }
  return { result, records, subtitles: subtitleRecords };
}

/** An item's author, upload date (YYYY-MM-DD) and description, trimmed and bounded; absent when unknown. */
export function describing(
  item: Pick<MediaDraft, 'author' | 'upload_date' | 'description'>,
): Pick<MediaItem, 'author' | 'upload_date' | 'description'> {
  const out: Pick<MediaItem, 'author' | 'upload_date' | 'description'> = {};
  const author = item.author?.trim();
  if (author) out.author = author.slice(0, 200);
  const date = toUploadDate(item.upload_date);
  if (date) out.upload_date = date;
  const description = item.description?.trim();
  if (description) out.description = description.slice(0, 5000);
  return out;
}

/** An item's own describing fields, without the undefined ones (which would hide the draft's). */
function defined(item: MediaDraft): Pick<MediaDraft, 'author' | 'upload_date' | 'description'> {
  const { author, upload_date, description } = item;
  return Object.fromEntries(
    Object.entries({ author, upload_date, description }).filter(([, v]) => v !== undefined && v !== ''),
  );
}

/** YYYY-MM-DD from an ISO date or date-time, yt-dlp's YYYYMMDD or Unix seconds; undefined for anything else. */
export function toUploadDate(value: string | number | undefined): string | undefined {
  if (typeof value === 'number') {
    const ms = value * 1000;
    return Number.isFinite(ms) && ms > 0 && ms < 8.64e15 ? new Date(ms).toISOString().slice(0, 10) : undefined;
  }
  const match = value === undefined ? null : /^(\d{4})-?(\d{2})-?(\d{2})(?:$|T|\s)/.exec(value.trim());
  if (!match) return undefined;
  const [, y, m, d] = match;
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d) ? `${y}-${m}-${d}` : undefined;
}

/**
 * What the source registry keeps of one returned source: its public fields, the headers its download
 * needs, where it sits (item index, title, page) and what its item says of it (duration, thumbnail,
 * author, date, live). One builder for a page's items and a collection's entries alike.
 */
export function sourceRecord(
  pub: Source,
  headers: SourceDraft['headers'],
  at: { media_index: number; title: string; page_url: string },
  item: MediaItem,
): SourceRecord {
  return {
    url: pub.url,
    stream_profile: pub.stream_profile,
    media_index: at.media_index,
    media_type: item.type,
    title: at.title,
    headers,
    mime_type: pub.mime_type,
    ext: pub.ext,
    codecs: pub.codecs,
    has_audio: pub.has_audio,
    has_video: pub.has_video,
    size: pub.size,
    duration: item.duration,
    ...(item.is_live ? { is_live: true } : {}),
    page_url: at.page_url,
    thumbnail: item.thumbnail,
    author: item.author,
    upload_date: item.upload_date,
  };
}
