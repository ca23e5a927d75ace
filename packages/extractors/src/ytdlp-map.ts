// yt-dlp's info JSON (`yt-dlp -J`) as a result draft. Only what reelay can deliver is kept: progressive
// http(s) files, HLS variants and segmented DASH representations; DRM, storyboards and other
// protocols (RTMP, ISM, websockets…) are dropped. The JSON is yt-dlp's, so every field is checked.
//
// Field meanings (yt-dlp README, "OUTPUT TEMPLATE"; platforms.md §20): vcodec/acodec 'none' means
// the track is absent, a missing value means unknown (yt-dlp then assumes both); tbr is in kbit/s;
// http_headers are what yt-dlp itself would send to download the format.
import { COLLECTION_PAGE_SIZE } from '@reelay/contracts';
import { mimeOfExt } from './media-types.js';
import type { EntryDraft, MediaDraft, ResultDraft, SourceDraft } from './types.js';
import { ytdlpSubtitles } from './ytdlp-subtitles.js';
import { arr, obj, positive, str, type Json } from './values.js';

/** Download headers yt-dlp records that a download needs; the rest (Accept, Sec-Fetch-*) are its own habits. */
const KEPT_HEADERS = ['User-Agent', 'Referer', 'Cookie', 'Origin'];

/** yt-dlp's extractor_key as a platform name: lower case, [a-z0-9_] only ("Youtube" → "youtube"). */
export function platformName(extractorKey: unknown): string {
  const name = (str(extractorKey) ?? '').toLowerCase().replace(/[^a-z0-9_]/g, '');
  return name || 'ytdlp';
}

/** The URL a DASH representation is known by, as our own DASH extractor names it. */
export function dashSourceUrl(manifestUrl: string, formatId: string, type?: 'video' | 'audio'): string {
  return `${manifestUrl.split('#')[0]}#representation=${encodeURIComponent(formatId.replace(/^dash-/, ''))}${type ? `&type=${type}` : ''}`;
}

/**
 * yt-dlp renames format ids that repeat (an audio and a video DASH representation sharing an id) to
 * ID-0, ID-1, …; the manifest only knows ID. For each such DASH format: its original id and kind, so
 * its URL names them as our DASH extractor does (#representation=ID&type=audio).
 */
export function sharedDashIds(formats: readonly Json[]): Map<Json, { id: string; type: 'video' | 'audio' }> {
  const dash = formats.filter((f) => str(f.protocol) === 'http_dash_segments' && str(f.format_id) !== undefined);
  const ids = new Set(dash.map((f) => str(f.format_id)!));
  const groups = new Map<string, { f: Json; type: 'video' | 'audio' }[]>();
  for (const f of dash) {
    const m = /^(.+)-(\d+)$/.exec(str(f.format_id)!);
    // Renamed only when the base id itself is gone and its siblings -0 and -1 are both there.
    if (!m || ids.has(m[1]) || !ids.has(`${m[1]}-0`) || !ids.has(`${m[1]}-1`)) continue;
    groups.set(m[1], [...(groups.get(m[1]) ?? []), { f, type: codec(f.vcodec) === null ? 'audio' : 'video' }]);
  }
  const out = new Map<Json, { id: string; type: 'video' | 'audio' }>();
  for (const [id, members] of groups) {
    // One audio and one video: the kind tells them apart. Two of a kind could not be (they keep yt-dlp's ids).
    if (new Set(members.map((m) => m.type)).size !== members.length) continue;
    for (const { f, type } of members) out.set(f, { id, type });
  }
  return out;
}

function isHttpUrl(v: string | undefined): v is string {
  return v !== undefined && /^https?:\/\//i.test(v);
}

/** A track's codec, or null when yt-dlp says the track is absent ('none'); undefined when unknown. */
function codec(v: unknown): string | null | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  return s === 'none' ? null : s;
}

function keptHeaders(v: unknown): Record<string, string> | undefined {
  const given = obj(v);
  if (!given) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const kept = KEPT_HEADERS.find((k) => k.toLowerCase() === name.toLowerCase());
    // A line break would let a value smuggle further headers into the download's request.
    if (kept && typeof value === 'string' && value !== '' && !/[\r\n\0]/.test(value)) out[kept] = value;
  }
  return Object.keys(out).length ? out : undefined;
}

function isStoryboard(f: Json): boolean {
  return /storyboard/i.test(str(f.format_note) ?? '') || str(f.ext) === 'mhtml' || str(f.protocol) === 'mhtml';
}

/** One yt-dlp format as a source, or undefined when reelay cannot deliver it. */
export function formatSource(f: Json, shared?: { id: string; type: 'video' | 'audio' }): SourceDraft | undefined {
  if (f.has_drm === true || isStoryboard(f)) return undefined;
  const vcodec = codec(f.vcodec);
  const acodec = codec(f.acodec);
  if (vcodec === null && acodec === null) return undefined; // neither track: images, subtitles
  const protocol = str(f.protocol) ?? 'https';
  const hasVideo = vcodec !== null;
  const hasAudio = acodec !== null;
  const common: Omit<SourceDraft, 'url' | 'stream_profile'> = {
    width: positive(f.width),
    height: positive(f.height),
    fps: positive(f.fps),
    bitrate: positive(f.tbr) !== undefined ? Math.round(positive(f.tbr)! * 1000) : undefined,
    codecs: [vcodec, acodec].filter((c): c is string => typeof c === 'string').join(',') || undefined,
    language: str(f.language),
    headers: keptHeaders(f.http_headers),
  };
  const tracks = { has_video: hasVideo, has_audio: hasAudio };

  if (protocol === 'm3u8' || protocol === 'm3u8_native') {
    const url = str(f.url);
    return isHttpUrl(url) ? { url, stream_profile: 'hls', ...common, ...tracks } : undefined;
  }
  if (protocol === 'http_dash_segments') {
    const manifest = str(f.manifest_url);
    const id = str(f.format_id);
    const url =
      isHttpUrl(manifest) && id
        ? shared
          ? dashSourceUrl(manifest, shared.id, shared.type)
          : dashSourceUrl(manifest, id)
        : undefined;
    return url ? { url, stream_profile: 'dash', ...common, ...tracks } : undefined;
  }
  if (protocol !== 'http' && protocol !== 'https') return undefined;
  const url = str(f.url);
  if (!isHttpUrl(url)) return undefined;
  const ext = str(f.ext)?.toLowerCase();
  const profile = hasVideo && hasAudio ? 'muxed_progressive' : hasVideo ? 'video_only' : 'audio_only';
  const mime = ext ? mimeOfExt(ext, profile === 'audio_only' ? 'audio' : undefined) : undefined;
  const split = profile === 'muxed_progressive' ? {} : tracks;
  return { url, stream_profile: profile, ext, mime_type: mime, size: positive(f.filesize), ...common, ...split };
}

/** yt-dlp's uploader (or channel, creator), upload_date (YYYYMMDD) and description, when it has them. */
function describing(entry: Json): Pick<MediaDraft, 'author' | 'upload_date' | 'description'> {
  const out: Pick<MediaDraft, 'author' | 'upload_date' | 'description'> = {};
  const author = str(entry.uploader) ?? str(entry.channel) ?? str(entry.creator) ?? str(entry.artist);
  if (author) out.author = author;
  const date = str(entry.upload_date) ?? str(entry.release_date);
  if (date) out.upload_date = date;
  const description = str(entry.description);
  if (description) out.description = description;
  return out;
}

function thumbnailOf(entry: Json): string | undefined {
  const direct = str(entry.thumbnail);
  if (isHttpUrl(direct)) return direct;
  // yt-dlp lists thumbnails worst first.
  const list = Array.isArray(entry.thumbnails) ? entry.thumbnails : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const url = str(obj(list[i])?.url);
    if (isHttpUrl(url)) return url;
  }
  return undefined;
}

/** One video entry as a media item; undefined when none of its formats can be delivered. */
function mediaItem(entry: Json): MediaDraft | undefined {
  // A single-format result carries its format's fields on the entry itself.
  const formats = (Array.isArray(entry.formats) ? entry.formats : [entry])
    .map((f) => obj(f))
    .filter((f): f is Json => f !== undefined);
  const shared = sharedDashIds(formats);
  const sources = formats.flatMap((f) => formatSource(f, shared.get(f)) ?? []);
  if (sources.length === 0) return undefined;
  const audioOnly = sources.every((s) => s.has_video === false);
  const item: MediaDraft = {
    type: audioOnly ? 'audio' : 'video',
    sources,
    title: str(entry.title),
    thumbnail: thumbnailOf(entry),
    duration: positive(entry.duration),
    ...describing(entry),
  };
  // yt-dlp's is_live: a broadcast in progress (was_live, a finished one, is an ordinary video).
  if (entry.is_live === true) item.is_live = true;
  const subtitles = ytdlpSubtitles(entry, keptHeaders(entry.http_headers) ?? sources.find((s) => s.headers)?.headers);
  if (subtitles.length) item.subtitles = subtitles;
  return item;
}

/** Video entries of an info dict: itself, or a playlist's entries (nested playlists flattened). */
function videoEntries(info: Json, depth = 0): Json[] {
  if (info._type !== 'playlist') return info._type === undefined || info._type === 'video' ? [info] : [];
  if (depth >= 2 || !Array.isArray(info.entries)) return [];
  return info.entries.flatMap((e) => {
    const entry = obj(e); // failed entries are null
    return entry ? videoEntries(entry, depth + 1) : [];
  });
}

/** Entries yt-dlp left unresolved (`--flat-playlist`): references to pages, not videos. */
const FLAT = new Set(['url', 'url_transparent']);

/** A flat entry's URL: its own, else its page's; yt-dlp's private "smuggled" fragment removed. */
function entryUrl(entry: Json): string | undefined {
  const url = [str(entry.url), str(entry.webpage_url), str(entry.original_url)].find(isHttpUrl);
  return url?.replace(/#__youtubedl_smuggle=.*$/, '');
}

function flatEntry(entry: Json): EntryDraft[] {
  const url = entryUrl(entry);
  if (!url) return [];
  const id = str(entry.id);
  return [
    {
      url,
      title: str(entry.title),
      id: id && id !== url ? id : undefined,
      duration: positive(entry.duration),
      thumbnail: thumbnailOf(entry),
      upload_date:
        str(entry.upload_date) ?? (positive(entry.timestamp) !== undefined ? positive(entry.timestamp) : undefined),
    },
  ];
}

/**
 * A playlist listed flat, as a collection page: yt-dlp was asked for items `start` to start + a page
 * (one more than a page: when it is there, another page follows).
 */
function collectionDraft(url: URL, root: Json, start: number): ResultDraft {
  const listed = arr(root.entries).flatMap((e) => (obj(e) ? flatEntry(obj(e)!) : []));
  const count = positive(root.playlist_count);
  const more =
    arr(root.entries).length > COLLECTION_PAGE_SIZE ||
    (count !== undefined && start - 1 + COLLECTION_PAGE_SIZE < count);
  const channel = str(root.channel_id) ?? str(root.uploader_id);
  return {
    url: url.href,
    platform: platformName(root.extractor_key),
    extract_profile: 'ytdlp',
    title: str(root.title),
    media: [],
    collection: {
      kind: channel !== undefined && channel === str(root.id) ? 'channel' : 'playlist',
      entries: listed.slice(0, COLLECTION_PAGE_SIZE),
      entry_count: count,
      next: more ? String(start + COLLECTION_PAGE_SIZE) : undefined,
    },
  };
}

/**
 * The whole answer as a draft; media is empty when nothing deliverable was found. A playlist whose
 * entries yt-dlp all left flat is a collection (its page starting at item `start`); one with videos
 * among its entries (a page with several players) is a gallery of those, as before.
 */
export function mapYtdlpInfo(url: URL, info: unknown, start = 1): ResultDraft {
  const root = obj(info) ?? {};
  const listed = arr(root.entries).filter((e) => obj(e));
  if (root._type === 'playlist' && listed.length > 0 && listed.every((e) => FLAT.has(String(obj(e)?._type))))
    return collectionDraft(url, root, start);
  return {
    url: url.href,
    platform: platformName(root.extractor_key),
    extract_profile: 'ytdlp',
    title: str(root.title),
    media: videoEntries(root).flatMap((e) => mediaItem(e) ?? []),
  };
}
