// DASH manifests (ISO/IEC 23009-1) as media: every audio or video Representation becomes a source,
// a progressive file when it is one BaseURL, otherwise a 'dash' source that names the representation
// in the MPD URL. @reelay/manifests reads the MPD (under its limits); the walk follows yt-dlp's
// _parse_mpd_formats.
import { ReelayError } from '@reelay/contracts';
import {
  attr,
  baseOf,
  DEFAULT_MAX_SEGMENTS,
  isoDuration,
  kids,
  looksLikeMpd,
  readMpd,
  repKind,
  segmentCount,
  splitCodecs,
  tooManySegments,
  type Base,
  type Kind,
  type XmlNode,
} from '@reelay/manifests';
import { urlExtension, type FetchedDocument } from './document.js';
import { extOfMime, HTML_TYPES } from './media-types.js';
import { subtitleFormat } from './subtitles.js';
import type {
  DocumentExtractor,
  ManifestOptions,
  MediaDraft,
  ResultDraft,
  SourceDraft,
  SubtitleDraft,
} from './types.js';
import { frameRate, positive } from './values.js';

/** Language codes that name no language (undetermined, multiple, none, missing). */
const NO_LANGUAGE = new Set(['und', 'mul', 'zxx', 'mis']);
const TRICK_MODE = 'http://dashif.org/guidelines/trickmode';

/** Segment addressing anywhere from Period down: a media template or a list of segment URLs. */
function isSegmented(levels: XmlNode[]): boolean {
  return levels.some(
    (n) =>
      kids(n, 'SegmentTemplate').some((t) => attr(t, 'media')) ||
      kids(n, 'SegmentList').some((l) => kids(l, 'SegmentURL').length > 0),
  );
}

interface Walk {
  manifest: URL;
  /** Representation ids that more than one kind of representation uses (audio and video sharing an id). */
  shared: Set<string>;
  sources: SourceDraft[];
  /** Text adaptation sets: subtitle tracks of the item. */
  subtitles: SubtitleDraft[];
  ids: Set<string>;
  protectedCount: number;
  maxSegments: number;
}

/**
 * The URL of a segmented representation: the manifest's, with `#representation=ID`. An id that
 * representations of different kinds share (yt-dlp's float_duration.mpd gives its audio and a video
 * the same id) also names the kind, `&type=audio`, so each URL stays unique; ffmpeg then picks the
 * stream by id and type.
 */
function repUrl(walk: Walk, id: string, kind: Kind): string {
  const url = new URL(walk.manifest.href);
  url.hash = `representation=${encodeURIComponent(id)}${walk.shared.has(id) ? `&type=${kind}` : ''}`;
  return url.href;
}

/** Claims a representation's id for its kind: false when the kind already has it (a later period's continuation). */
function claim(walk: Walk, id: string, kind: Kind): boolean {
  const key = `${kind} ${id}`;
  if (walk.ids.has(key)) return false;
  walk.ids.add(key);
  return true;
}

/** The ids that representations of more than one kind use. */
function sharedIds(periods: XmlNode[]): Set<string> {
  const kinds = new Map<string, Set<Kind>>();
  for (const period of periods)
    for (const set of kids(period, 'AdaptationSet'))
      for (const rep of kids(set, 'Representation')) {
        const id = attr(rep, 'id');
        const kind = repKind(set, rep);
        if (id !== undefined && kind !== undefined) kinds.set(id, (kinds.get(id) ?? new Set()).add(kind));
      }
  return new Set([...kinds].filter(([, k]) => k.size > 1).map(([id]) => id));
}

function representation(
  walk: Walk,
  levels: { period: XmlNode; set: XmlNode; rep: XmlNode; seconds?: number },
  base: Base,
  fallbackId: string,
): void {
  const { period, set, rep } = levels;
  const pick = (name: string) => attr(rep, name) ?? attr(set, name);
  const mime = pick('mimeType')?.toLowerCase();
  const codecsText = pick('codecs');
  const codecs = splitCodecs(codecsText);
  const kind = repKind(set, rep);
  if (kind === 'text') return textTrack(walk, levels, base, fallbackId);
  if (kind !== 'video' && kind !== 'audio') return; // storyboards are not media sources
  // A dependent representation (LCEVC's lvc1 layer, SVC, MV-HEVC) decodes only on top of its base.
  if (attr(rep, 'dependencyId')) return;
  if (kids(set, 'ContentProtection').length || kids(rep, 'ContentProtection').length) {
    walk.protectedCount++;
    return;
  }
  // The same id in a later period is the same stream continued; its URL would collide anyway.
  const id = attr(rep, 'id') ?? fallbackId;
  if (!claim(walk, id, kind)) return;

  const muxed = codecs.video.length > 0 && codecs.audio.length > 0;
  const hasVideo = kind === 'video' || muxed;
  const hasAudio = kind === 'audio' || muxed;
  let location: Pick<SourceDraft, 'url' | 'stream_profile'>;
  if (isSegmented([period, set, rep])) {
    if (segmentCount([rep, set, period], levels.seconds, walk.maxSegments) > walk.maxSegments)
      throw tooManySegments(`DASH representation "${id}"`, walk.maxSegments);
    location = { url: repUrl(walk, id, kind), stream_profile: 'dash' };
  } else {
    // One file addressed by BaseURL (with a SegmentBase index or none at all). Without any BaseURL
    // the representation names no file and is skipped.
    if (!base.given) return;
    location = {
      url: base.url.href,
      stream_profile: muxed ? 'muxed_progressive' : hasVideo ? 'video_only' : 'audio_only',
    };
  }
  const lang = pick('lang');
  const picture = hasVideo
    ? { width: positive(pick('width')), height: positive(pick('height')), fps: frameRate(pick('frameRate')) }
    : {};
  walk.sources.push({
    ...location,
    mime_type: mime,
    ext: extOfMime(mime),
    codecs: codecsText,
    bitrate: positive(pick('bandwidth')),
    language: lang && !NO_LANGUAGE.has(lang.toLowerCase()) ? lang : undefined,
    has_audio: hasAudio,
    has_video: hasVideo,
    ...picture,
  });
}

/**
 * A text representation as a subtitle track: a sidecar file (one BaseURL of WebVTT, SRT or TTML) as
 * it is, or a segmented track (wvtt or stpp in MP4 segments) named like a segmented source.
 */
function textTrack(
  walk: Walk,
  levels: { period: XmlNode; set: XmlNode; rep: XmlNode },
  base: Base,
  fallbackId: string,
): void {
  const { period, set, rep } = levels;
  const pick = (name: string) => attr(rep, name) ?? attr(set, name);
  if (kids(set, 'ContentProtection').length || kids(rep, 'ContentProtection').length) return;
  const id = attr(rep, 'id') ?? fallbackId;
  if (!claim(walk, id, 'text')) return;
  const lang = pick('lang');
  const labelNode = kids(rep, 'Label')[0] ?? kids(set, 'Label')[0];
  const label = typeof labelNode?.['#text'] === 'string' ? labelNode['#text'].trim() || undefined : undefined;
  const codecs = pick('codecs');
  const common = { language: lang && !NO_LANGUAGE.has(lang.toLowerCase()) ? lang : 'und', ...(label ? { label } : {}) };
  if (isSegmented([period, set, rep])) {
    walk.subtitles.push({ ...common, url: repUrl(walk, id, 'text'), format: 'dash', ...(codecs ? { codecs } : {}) });
    return;
  }
  if (!base.given) return;
  const mime = pick('mimeType')?.toLowerCase();
  const format = subtitleFormat(base.url.href, mime) ?? (codecs?.toLowerCase() === 'wvtt' ? 'vtt' : undefined);
  // A single MP4 file of text samples has no sidecar format a player or reelay reads as it is.
  if (format === 'vtt' || format === 'srt' || format === 'ttml')
    walk.subtitles.push({ ...common, url: base.url.href, format });
}

/** The media item of a DASH manifest fetched from `url`; `headers` go onto every source. */
export function parseMpd(text: string, url: URL, options: ManifestOptions = {}): MediaDraft[] {
  const { headers, maxSegments = DEFAULT_MAX_SEGMENTS } = options;
  const mpd = readMpd(text, maxSegments);
  const manifest = new URL(url.href);
  manifest.hash = '';
  const periods = kids(mpd, 'Period');
  const walk: Walk = {
    manifest,
    shared: sharedIds(periods),
    sources: [],
    subtitles: [],
    ids: new Set(),
    protectedCount: 0,
    maxSegments,
  };
  const mpdBase = baseOf(mpd, { url: manifest, given: false });
  const total = isoDuration(attr(mpd, 'mediaPresentationDuration'));
  periods.forEach((period, p) => {
    const seconds = isoDuration(attr(period, 'duration')) ?? (periods.length === 1 ? total : undefined);
    const periodBase = baseOf(period, mpdBase);
    kids(period, 'AdaptationSet').forEach((set, a) => {
      // Trick-mode sets are I-frame tracks for scrubbing, not a watchable stream.
      if (kids(set, 'EssentialProperty').some((e) => attr(e, 'schemeIdUri') === TRICK_MODE)) return;
      const setBase = baseOf(set, periodBase);
      kids(set, 'Representation').forEach((rep, r) => {
        representation(walk, { period, set, rep, seconds }, baseOf(rep, setBase), `p${p}-a${a}-r${r}`);
      });
    });
  });
  if (walk.sources.length === 0) {
    if (walk.protectedCount > 0)
      throw new ReelayError(
        'no_media_found',
        'The stream is DRM-protected (DASH ContentProtection), so it cannot be downloaded.',
      );
    throw new ReelayError('no_media_found', 'The DASH manifest lists no audio or video representations.');
  }
  if (headers) for (const source of [...walk.sources, ...walk.subtitles]) source.headers = { ...headers };
  const periodDurations = kids(mpd, 'Period').map((p) => isoDuration(attr(p, 'duration')));
  const duration =
    isoDuration(attr(mpd, 'mediaPresentationDuration')) ??
    (periodDurations.some((d) => d !== undefined)
      ? periodDurations.reduce<number>((sum, d) => sum + (d ?? 0), 0)
      : undefined);
  const type = walk.sources.some((s) => s.has_video) ? 'video' : 'audio';
  // type="dynamic": a live presentation (its durations, if any, describe a window, not the length).
  if (attr(mpd, 'type') === 'dynamic') {
    const sources = walk.sources.map((s) => ({ ...s, is_live: true }));
    return [
      walk.subtitles.length
        ? { type, sources, is_live: true, subtitles: walk.subtitles }
        : { type, sources, is_live: true },
    ];
  }
  return [
    walk.subtitles.length
      ? { type, sources: walk.sources, duration, subtitles: walk.subtitles }
      : { type, sources: walk.sources, duration },
  ];
}

function detect(doc: FetchedDocument): boolean {
  if (doc.contentType === 'application/dash+xml') return true;
  // A .mpd URL answered with an HTML page (an error page, a login wall) is left to the page extractor.
  if (HTML_TYPES.has(doc.contentType)) return false;
  if (urlExtension(doc.finalUrl) === 'mpd') return true;
  // Sniffing the first bytes is for text served as octet-stream or XML, never for media files.
  return !/^(video|audio|image)\//.test(doc.contentType) && looksLikeMpd(doc.head.toString('utf8'));
}

export const dashManifest: DocumentExtractor = {
  name: 'dash_manifest',
  detect,
  async extract(doc, ctx): Promise<ResultDraft> {
    const media = parseMpd(await doc.text(), doc.finalUrl, { maxSegments: ctx.maxSegments });
    return { url: doc.url.href, platform: 'generic', extract_profile: 'dash_manifest', media };
  },
};
