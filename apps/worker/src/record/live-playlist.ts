// A live HLS playlist as the recorder reads it: its segments numbered by media sequence, its target
// duration, whether it has ended, and a master's best variant. Pure, so hostile playlists are tested
// without a server; every list it returns is bounded.
export interface LiveSegment {
  /** Media sequence number (a DASH source: its position, see segment-source.ts). */
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

/** More segments than this in one refresh are not kept: the oldest go (a from_start records a gap for them). */
export const MAX_LISTED = 2_000;

const attr = (line: string, name: string): string | undefined =>
  new RegExp(`(?:^|[:,])${name}=("([^"]*)"|[^,]*)`).exec(line)?.[2] ??
  new RegExp(`(?:^|[:,])${name}=([^,]*)`).exec(line)?.[1];

export function parseLivePlaylist(text: string, base: string): LivePlaylist | LiveMaster {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (lines[0] !== '#EXTM3U') throw new Error('not an HLS playlist (no #EXTM3U)');
  const resolve = (uri: string) => new URL(uri, base).href;
  if (lines.some((l) => l.startsWith('#EXT-X-STREAM-INF'))) {
    let best: { bw: number; uri: string } | undefined;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].startsWith('#EXT-X-STREAM-INF')) continue;
      const uri = lines.slice(i + 1).find((l) => l !== '' && !l.startsWith('#'));
      const bw = Number(attr(lines[i], 'BANDWIDTH') ?? 0);
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
      const uri = attr(line, 'URI');
      init = uri ? resolve(uri) : undefined;
    } else if (line === '#EXT-X-DISCONTINUITY') pending.discontinuity = true;
    else if (line.startsWith('#EXTINF:')) pending.duration = Number.parseFloat(line.slice(8));
    else if (line !== '' && !line.startsWith('#')) {
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
