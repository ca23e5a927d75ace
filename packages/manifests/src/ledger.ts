// What a job's manifests may be, checked in the job itself: the origin may serve a benign master at
// extract time and a hostile one to the job. One level of nesting (a master names media playlists, a
// media playlist names segments), no playlist naming itself, at most MAX_SEGMENTS segments in one
// playlist. What the manifests declare also sets how many requests the job may make (the proxy
// session's budget): a playlist that makes ffmpeg fetch 750 playlists a second runs out at once.
// An MPD is held to the XML rules the extract holds it to (no DTD, so no entity is expanded).
import { isReelayError, ReelayError } from '@reelay/contracts';
import { countUriLines, isUriLine, playlistLines, tagAttributes } from './hls-text.js';
import { checkSize } from './limits.js';
import { isoDuration } from './values.js';
import { refuseDtd } from './xml.js';

/** Requests any job may make before its manifests grant more: probes, range seeks, redirects. */
export const BASE_REQUESTS = 64;
/** Requests granted per distinct segment or key a manifest names: ffmpeg's fetch and ffprobe's or a retry. */
const PER_RESOURCE = 2;
/** Distinct resources all of a job's manifests may name together, in MAX_SEGMENTS. */
const TOTAL_IN_SEGMENTS = 4;

type Role = 'playlist' | 'segment';

// Tags of a media playlist whose URI attribute names something ffmpeg fetches.
const MEDIA_URI_TAGS = /^#EXT-X-(?:MAP|KEY|PART|PRELOAD-HINT):/;
// Tags of a master playlist whose URI attribute names a playlist.
const MASTER_URI_TAGS = /^#EXT-X-(?:MEDIA|I-FRAME-STREAM-INF):/;
// A master playlist: a line (after its white space) that lists a variant or names a rendition.
const MASTER_LINE = /^[ \t]*#EXT-X-(?:STREAM-INF|MEDIA:|I-FRAME-STREAM-INF:)/m;

export class ManifestLedger {
  private readonly roles = new Map<string, Role>();

  constructor(readonly maxSegments: number) {}

  /**
   * Checks an HLS playlist fetched at `url` and returns the requests it grants; throws a ReelayError
   * (upstream_error) saying why when it is refused.
   */
  checkHls(text: string, url: URL): number {
    const self = key(url);
    asJobRefusal(() => checkSize(text, 'playlist'));
    const master = MASTER_LINE.test(text);
    const role = this.roles.get(self);
    if (role === 'segment') throw refused('A playlist was served where a media segment was expected.');
    if (master && role === 'playlist')
      throw refused('A master playlist names another master playlist; only one level of nesting is allowed.');
    // Counted on the text: a playlist of a million segments is refused before it becomes lines.
    const segments = master ? 0 : countUriLines(text);
    if (segments > this.maxSegments)
      throw refused(`A playlist names ${segments} segments, more than the limit of ${this.maxSegments}.`);

    const lines = playlistLines(text);
    const named: { ref: string; role: Role }[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line === '') continue;
      if (isUriLine(line)) {
        named.push({ ref: line, role: master ? 'playlist' : 'segment' });
      } else if ((master && MASTER_URI_TAGS.test(line)) || (!master && MEDIA_URI_TAGS.test(line))) {
        const uri = tagAttributes(line).URI;
        if (uri) named.push({ ref: uri, role: master ? 'playlist' : 'segment' });
      }
    }

    let grant = 0;
    for (const { ref, role: childRole } of named) {
      let target: URL;
      try {
        target = new URL(ref, url);
      } catch {
        continue; // ffmpeg cannot fetch it either
      }
      const name = key(target);
      if (name === self) throw refused('A playlist names itself.');
      // Opening a master makes ffmpeg fetch every playlist it names, each time: granted per mention.
      if (childRole === 'playlist') grant += 1;
      if (this.roles.has(name)) continue;
      if (this.roles.size >= this.maxSegments * TOTAL_IN_SEGMENTS) {
        throw refused(`The job's playlists name more than ${this.maxSegments * TOTAL_IN_SEGMENTS} resources in all.`);
      }
      this.roles.set(name, childRole);
      if (childRole === 'segment') grant += PER_RESOURCE;
    }
    // A live media playlist (no EXT-X-ENDLIST, not PLAYLIST-TYPE:VOD) would keep ffmpeg reloading it
    // until the job's timeout, and then fail with nothing kept. The extract marks a live media
    // playlist and download refuses it, but a master's variants are first read here (a download of
    // a master's variant was extracted from the master, which says nothing of being live), and a
    // stream may go live between extract and job. Live recording (operation "record", record/) reads
    // live playlists with its own fetcher and is the one job that takes them.
    if (!master && !lines.includes('#EXT-X-ENDLIST') && !lines.includes('#EXT-X-PLAYLIST-TYPE:VOD')) {
      throw refused(
        "the stream is live (its playlist has no EXT-X-ENDLIST), and a live variant of a master playlist is not recorded yet: extract the variant's own playlist and download that to record it.",
      );
    }
    return grant;
  }

  /** Checks a DASH manifest and returns the requests it grants (its segments, counted as ffmpeg would). */
  checkDash(text: string): number {
    asJobRefusal(() => {
      checkSize(text, 'DASH manifest');
      refuseDtd(text, 'DASH manifest');
    });
    const segments = declaredDashSegments(text);
    if (segments > this.maxSegments)
      throw refused(
        `A DASH manifest declares ${segments} segments per representation, more than the limit of ${this.maxSegments}.`,
      );
    const representations = Math.max(1, (text.match(/<(?:\w+:)?Representation[\s>]/g) ?? []).length);
    return Math.min(segments * representations, this.maxSegments * TOTAL_IN_SEGMENTS) * PER_RESOURCE;
  }
}

/** Segments one representation of a DASH manifest has, counted on its text: the most of its lists, timelines and templates. */
export function declaredDashSegments(text: string): number {
  const listed = (text.match(/<(?:\w+:)?SegmentURL[\s/>]/g) ?? []).length;
  let timeline = 0;
  for (const match of text.matchAll(/<(?:\w+:)?S\s[^>]*>/g)) {
    const r = /\br="(-?\d+)"/.exec(match[0]);
    timeline += 1 + Math.max(0, Number(r?.[1] ?? 0));
  }
  let templated = 0;
  const total = isoDuration(/mediaPresentationDuration="([^"]+)"/.exec(text)?.[1]);
  for (const match of text.matchAll(/<(?:\w+:)?SegmentTemplate\s[^>]*>/g)) {
    const duration = Number(/\bduration="(\d+)"/.exec(match[0])?.[1]);
    const timescale = Number(/\btimescale="(\d+)"/.exec(match[0])?.[1] ?? 1);
    if (duration > 0 && timescale > 0 && total !== undefined)
      templated = Math.max(templated, Math.ceil((total * timescale) / duration));
  }
  return Math.max(listed, timeline, templated);
}

/** A URL as ffmpeg would fetch it: without its fragment. */
function key(url: URL): string {
  const copy = new URL(url);
  copy.hash = '';
  return copy.href;
}

function refused(message: string): ReelayError {
  return new ReelayError('upstream_error', `The job's manifest was refused: ${message}`);
}

/** A refusal of the shared rules (limits.ts, xml.ts), worded as the job's. */
function asJobRefusal(check: () => void): void {
  try {
    check();
  } catch (err) {
    if (!isReelayError(err)) throw err;
    throw refused(err.message.replace(/^The /, 'the '));
  }
}
