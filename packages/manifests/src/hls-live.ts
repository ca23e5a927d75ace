// A live HLS playlist as the recorder reads it: its segments numbered by media sequence, its target
// duration, whether it has ended, and a master's best variant; and the extract's test of whether a
// media playlist is live. Pure, so hostile playlists are tested without a server; every list it
// returns is bounded (MAX_LISTED).
import { isUriLine, playlistLines, tagAttributes } from './hls-text.js';
import { checkSize, MAX_LISTED } from './limits.js';

export interface LiveSegment {
  /** Media sequence number (a DASH window's segments: their position, mpd-live.ts). */
  seq: number;
  /** The position of the segment that follows without a gap (absent: seq + 1). */
  next?: number;
  url: string;
  duration: number;
  /** The init section (EXT-X-MAP) this segment needs, absolute. */
  init?: string;
  /** An EXT-X-DISCONTINUITY comes before it: a new part starts there. */
  discontinuity: boolean;
  /** Seconds of presentation time where it starts, when the source says (DASH): what lines the tracks of an A/V recording up. */
  at?: number;
}

export interface LivePlaylist {
  kind: 'media';
  targetDuration: number;
  mediaSequence: number;
  segments: LiveSegment[];
  ended: boolean;
  /** Segments listed beyond MAX_LISTED, dropped from the oldest end. */
  dropped: number;
  encrypted: boolean;
}

export interface LiveMaster {
  kind: 'master';
  /** The variant with the highest bandwidth, absolute. */
  variant: string;
}

/**
 * The rule media playlists are judged live by, on the text itself: a media playlist, with segments,
 * without EXT-X-ENDLIST and not PLAYLIST-TYPE:VOD. A master is not live by this rule (its variants say).
 */
export function isLiveMediaPlaylist(text: string): boolean {
  if (!text.trimStart().startsWith('#EXTM3U')) return false;
  const tags = new Set(playlistLines(text).map((l) => l.split(':')[0]));
  if (tags.has('#EXT-X-STREAM-INF') || !tags.has('#EXTINF') || tags.has('#EXT-X-ENDLIST')) return false;
  return !/^\s*#EXT-X-PLAYLIST-TYPE:\s*VOD\s*$/m.test(text);
}

/** A live playlist fetched from `base`: a media playlist's window, or a master's best variant. */
export function parseLivePlaylist(text: string, base: string): LivePlaylist | LiveMaster {
  checkSize(text, 'live playlist');
  const lines = playlistLines(text);
  if (lines[0] !== '#EXTM3U') throw new Error('not an HLS playlist (no #EXTM3U)');
  const resolve = (uri: string) => new URL(uri, base).href;
  if (lines.some((l) => l.startsWith('#EXT-X-STREAM-INF'))) {
    let best: { bw: number; uri: string } | undefined;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].startsWith('#EXT-X-STREAM-INF')) continue;
      const uri = lines.slice(i + 1).find(isUriLine);
      const bw = Number(tagAttributes(lines[i]).BANDWIDTH ?? 0);
      if (uri && (!best || bw > best.bw)) best = { bw, uri };
    }
    if (!best) throw new Error('a master playlist without variants');
    return { kind: 'master', variant: resolve(best.uri) };
  }
  let targetDuration = 0;
  let mediaSequence = 0;
  let ended = false;
  let encrypted = false;
  let init: string | undefined;
  let pending: { duration: number; discontinuity: boolean } = { duration: 0, discontinuity: false };
  let segments: LiveSegment[] = [];
  let dropped = 0;
  for (const line of lines) {
    if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) mediaSequence = Number(line.slice(22));
    else if (line === '#EXT-X-ENDLIST') ended = true;
    else if (line.startsWith('#EXT-X-KEY:') && !/METHOD=NONE/.test(line)) encrypted = true;
    else if (line.startsWith('#EXT-X-MAP:')) {
      const uri = tagAttributes(line).URI;
      init = uri ? resolve(uri) : undefined;
    } else if (line === '#EXT-X-DISCONTINUITY') pending.discontinuity = true;
    else if (line.startsWith('#EXTINF:')) pending.duration = Number.parseFloat(line.slice(8));
    else if (isUriLine(line)) {
      const duration = Number.isFinite(pending.duration) && pending.duration > 0 ? pending.duration : 0;
      segments.push({
        seq: mediaSequence + segments.length + dropped,
        url: resolve(line),
        duration,
        init,
        discontinuity: pending.discontinuity,
      });
      pending = { duration: 0, discontinuity: false };
      // Bounded while parsing: a playlist of a million lines never becomes a million objects.
      if (segments.length > 2 * MAX_LISTED) {
        dropped += segments.length - MAX_LISTED;
        segments = segments.slice(-MAX_LISTED);
      }
    }
  }
  if (segments.length > MAX_LISTED) {
    dropped += segments.length - MAX_LISTED;
    segments = segments.slice(-MAX_LISTED);
  }
  if (!Number.isFinite(mediaSequence) || mediaSequence < 0)
    throw new Error('the playlist has no usable EXT-X-MEDIA-SEQUENCE');
  if (!(targetDuration > 0)) targetDuration = Math.max(1, ...segments.map((s) => s.duration));
  return { kind: 'media', targetDuration, mediaSequence, segments, ended, dropped, encrypted };
}
