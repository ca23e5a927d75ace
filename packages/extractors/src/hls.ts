// HLS playlists (RFC 8216) as media: a master's variants and alternate renditions become 'hls'
// sources of one item, a media playlist becomes one source. @reelay/manifests reads the text (under
// its limits); what is listed, what counts as DRM and what is audio follows yt-dlp's
// _parse_m3u8_formats.
import { ReelayError } from '@reelay/contracts';
import {
  DEFAULT_MAX_SEGMENTS,
  isMaster,
  looksLikeHls,
  readHls,
  refuseSelfNaming,
  resolvePlaylistUri,
  splitCodecs,
  type Key,
  type MasterPlaylist,
  type MediaPlaylist,
  type Rendition,
  type Variant,
} from '@reelay/manifests';
import { judgeMaster } from './hls-live.js';
import { urlExtension, type FetchedDocument } from './document.js';
import { HLS_TYPES, HTML_TYPES } from './media-types.js';
import type {
  DocumentExtractor,
  ManifestOptions,
  MediaDraft,
  ResultDraft,
  SourceDraft,
  SubtitleDraft,
} from './types.js';
import { positive } from './values.js';

/** Key systems whose keys only a licensed player can obtain: FairPlay, PlayReady, Widevine. */
const DRM_KEYFORMATS = new Set([
  'com.apple.streamingkeydelivery',
  'com.microsoft.playready',
  'urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed',
]);

/** Segment extensions that can only carry audio (a media playlist of these is an audio stream). */
const AUDIO_SEGMENT_EXTS = new Set(['aac', 'mp3', 'm4a', 'ac3', 'ec3', 'eac3', 'opus', 'flac', 'oga', 'mka', 'weba']);

/** The media items of an HLS playlist fetched from `url`; `options.headers` go onto every source. */
export function parseHls(text: string, url: URL, options: ManifestOptions = {}): MediaDraft[] {
  const { headers, maxSegments = DEFAULT_MAX_SEGMENTS } = options;
  const playlist = readHls(text, maxSegments);
  // Adobe Access (FAXS) is signalled by a tag hls-parser drops as unknown, so it is looked for in the text.
  if (/^\s*#EXT-X-FAXS-CM:/m.test(text)) throw drmError();
  if (playlist.isMasterPlaylist) refuseSelfNaming(playlist, [url, options.fetchedAs]);
  const media = playlist.isMasterPlaylist ? fromMaster(playlist, url) : fromMedia(playlist, url);
  if (headers) {
    for (const item of media) {
      for (const source of item.sources) source.headers = { ...headers };
      for (const sub of item.subtitles ?? []) sub.headers = { ...headers };
    }
  }
  return media;
}

function isDrmKey(key: Key | null | undefined): boolean {
  if (!key || key.method === 'NONE') return false;
  return (key.uri ?? '').toLowerCase().startsWith('skd://') || DRM_KEYFORMATS.has((key.format ?? '').toLowerCase());
}

function drmError(): ReelayError {
  return new ReelayError(
    'no_media_found',
    'The stream is DRM-protected (FairPlay, PlayReady, Widevine or Adobe Access), so it cannot be downloaded.',
  );
}

/** The rendition a player picks from a group: the DEFAULT one, else the first. */
function chosen(group: Rendition[]): Rendition | undefined {
  return group.find((r) => r.isDefault) ?? group[0];
}

/**
 * yt-dlp's rule: a variant takes its audio from its group when it names its codecs and the group's
 * rendition has a URI of its own. Some sites reference a group without CODECS yet carry the audio in
 * the variant, so those count as muxed.
 */
function takesGroupAudio(v: Variant): boolean {
  return Boolean(v.codecs) && Boolean(chosen(v.audio)?.uri);
}

function variantSource(v: Variant, url: URL): SourceDraft {
  const codecs = splitCodecs(v.codecs);
  const source: SourceDraft = { url: url.href, stream_profile: 'hls' };
  source.bitrate = positive(v.averageBandwidth) ?? positive(v.bandwidth);
  source.width = positive(v.resolution?.width);
  source.height = positive(v.resolution?.height);
  source.fps = positive(v.frameRate);
  if (codecs.audio.length && !codecs.video.length) {
    return { ...source, codecs: v.codecs, has_audio: true, has_video: false };
  }
  if (takesGroupAudio(v))
    return { ...source, codecs: codecs.video.join(',') || v.codecs, has_audio: false, has_video: true };
  const videoOnly = codecs.video.length > 0 && codecs.audio.length === 0;
  return { ...source, codecs: v.codecs, has_audio: !videoOnly, has_video: true };
}

/** A bitrate written into a group or rendition name ("aac-128k", "stereo 96kbps"), in bits/s. */
function bitrateFromName(...names: (string | undefined)[]): number | undefined {
  for (const name of names) {
    const m = /(?:^|[^\d])(\d{2,3})\s?k(?:bps|b)?(?![a-z])/i.exec(name ?? '');
    if (m) return Number(m[1]) * 1000;
  }
  return undefined;
}

function fromMaster(master: MasterPlaylist, base: URL): MediaDraft[] {
  if (master.sessionKeyList.some(isDrmKey)) throw drmError();
  // I-frame playlists are trick-play thumbnails, not a watchable stream.
  const variants = master.variants.filter((v) => !v.isIFrameOnly);
  const videos: SourceDraft[] = [];
  const audios: SourceDraft[] = [];
  const audioRenditions: SourceDraft[] = [];
  const videoRenditions: SourceDraft[] = [];
  for (const v of variants) {
    const url = resolvePlaylistUri(v.uri, base);
    if (url) {
      const source = variantSource(v, url);
      (source.has_video ? videos : audios).push(source);
    }
    const audioCodecs = splitCodecs(v.codecs).audio.join(',') || undefined;
    for (const r of v.audio) {
      const rurl = resolvePlaylistUri(r.uri, base);
      if (!rurl) continue;
      audioRenditions.push({
        url: rurl.href,
        stream_profile: 'hls',
        has_audio: true,
        has_video: false,
        codecs: audioCodecs,
        language: r.language,
        bitrate: bitrateFromName(r.groupId, r.name),
      });
    }
    for (const r of v.video) {
      const rurl = resolvePlaylistUri(r.uri, base);
      if (!rurl) continue;
      // An alternate camera angle: without audio when its variant takes audio from a group, else unknown.
      videoRenditions.push({
        url: rurl.href,
        stream_profile: 'hls',
        has_video: true,
        ...(takesGroupAudio(v) ? { has_audio: false } : {}),
      });
    }
  }
  // An audio-only variant often points at the same playlist as an audio rendition: the rendition
  // (with its language) is kept, and takes the variant's declared bandwidth as its bitrate.
  const variantBitrate = new Map(audios.map((s) => [s.url, s.bitrate]));
  for (const r of audioRenditions) r.bitrate = variantBitrate.get(r.url) ?? r.bitrate;

  // The same playlist is often listed more than once (a variant per audio group): the first wins.
  const byUrl = new Map<string, SourceDraft>();
  for (const s of [...videos, ...videoRenditions, ...audioRenditions, ...audios])
    if (!byUrl.has(s.url)) byUrl.set(s.url, s);
  const sources = [...byUrl.values()];
  if (sources.length === 0)
    throw new ReelayError('no_media_found', 'The HLS master playlist lists no playable variants.');
  const type = sources.some((s) => s.has_video) ? 'video' : 'audio';
  const subtitles = subtitleRenditions(variants, base);
  // A master has no duration of its own, and says nothing of being live: hls-live.ts reads a
  // variant to judge that (the extractors do; this pure parser does not fetch).
  return [subtitles.length ? { type, sources, subtitles } : { type, sources }];
}

/**
 * EXT-X-MEDIA TYPE=SUBTITLES renditions: each names a media playlist of WebVTT segments, which a
 * job joins into one file. The same rendition listed by several variants is kept once.
 */
function subtitleRenditions(variants: readonly Variant[], base: URL): SubtitleDraft[] {
  const byUrl = new Map<string, SubtitleDraft>();
  for (const r of variants.flatMap((v) => v.subtitles)) {
    const url = resolvePlaylistUri(r.uri, base);
    if (!url || byUrl.has(url.href)) continue;
    byUrl.set(url.href, { language: r.language ?? 'und', label: r.name || undefined, url: url.href, format: 'hls' });
  }
  return [...byUrl.values()];
}

function fromMedia(playlist: MediaPlaylist, url: URL): MediaDraft[] {
  // hls-parser adds an empty segment for tags after the last URI line (e.g. a final EXT-X-CUE-IN).
  const segments = playlist.segments.filter((s) => s.uri);
  if (segments.length === 0)
    throw new ReelayError('upstream_error', 'The HLS playlist is invalid: it has neither variants nor segments.');
  if (segments.some((s) => isDrmKey(s.key))) throw drmError();
  const audioOnly =
    segments.every((s) => AUDIO_SEGMENT_EXTS.has(urlExtension(s.uri))) ||
    AUDIO_SEGMENT_EXTS.has(urlExtension(segments[0].map?.uri ?? ''));
  const source: SourceDraft = audioOnly
    ? { url: url.href, stream_profile: 'hls', has_audio: true, has_video: false }
    : { url: url.href, stream_profile: 'hls', has_video: true };
  // Without EXT-X-ENDLIST the playlist is live: its segments are a moving window, not the length.
  const live = !playlist.endlist && playlist.playlistType !== 'VOD';
  if (live) return [{ type: audioOnly ? 'audio' : 'video', sources: [{ ...source, is_live: true }], is_live: true }];
  const duration = segments.reduce((sum, s) => sum + (positive(s.duration) ?? 0), 0);
  return [{ type: audioOnly ? 'audio' : 'video', sources: [source], duration }];
}

function detect(doc: FetchedDocument): boolean {
  if (HLS_TYPES.has(doc.contentType)) return true;
  if (looksLikeHls(doc.head.toString('utf8'))) return true;
  // A .m3u8 URL answered with an HTML page is an error page or a login wall, left to the page extractor.
  return urlExtension(doc.finalUrl) === 'm3u8' && !HTML_TYPES.has(doc.contentType);
}

export const hlsManifest: DocumentExtractor = {
  name: 'hls_manifest',
  detect,
  async extract(doc, ctx): Promise<ResultDraft> {
    const text = await doc.text();
    const parsed = parseHls(text, doc.finalUrl, { maxSegments: ctx.maxSegments, fetchedAs: doc.url });
    const media = isMaster(text) ? await judgeMaster(parsed, ctx) : parsed;
    return { url: doc.url.href, platform: 'generic', extract_profile: 'hls_manifest', media };
  },
};
