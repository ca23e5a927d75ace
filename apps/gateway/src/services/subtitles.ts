// Subtitle side of download planning: a subtitle track's own download (as it is, converted, or
// joined from its HLS/DASH segments), and the tracks a video download embeds by language.
import {
  ReelayError,
  SUBTITLE_FORMATS,
  type DownloadRequest,
  type StoredSubtitle,
  type SubtitleInput,
} from '@reelay/contracts';
import { parseDashFragment } from './dash-fragment.js';

// ffmpeg 5.1 reads no WebVTT (wvtt) samples from MP4 and decodes no TTML (stpp), so such a track is
// listed by the extract but refused here with the reason, rather than failing as a job.
const SEGMENTED_DASH =
  'This DASH subtitle track is segmented (WebVTT or TTML in MP4 segments), which cannot be converted or embedded yet; use a sidecar or HLS track.';
const MIME: Record<string, string> = { vtt: 'text/vtt', srt: 'application/x-subrip', ttml: 'application/ttml+xml' };

function invalid(message: string): ReelayError {
  return new ReelayError('invalid_request', message);
}

/** A stored track as a job reads it; a DASH track's URL names its representation. */
export function toSubtitleInput(sub: StoredSubtitle): SubtitleInput {
  let url = sub.url;
  let representation: string | undefined;
  const named = sub.format === 'dash' ? parseDashFragment(url) : undefined;
  if (named) {
    representation = named.id;
    url = named.url;
  }
  if (sub.format === 'ttml')
    throw invalid('TTML subtitles cannot be converted or embedded; download the track as it is.');
  if (sub.format === 'dash') throw invalid(SEGMENTED_DASH);
  return {
    url,
    format: sub.format,
    language: sub.language,
    label: sub.label?.slice(0, 200),
    representation,
    headers: sub.headers,
  };
}

export type SubtitlePlan =
  | { kind: 'direct'; mime_type: string; ext: string }
  | { kind: 'job'; operation: 'convert' | 'remux'; format: 'vtt' | 'srt'; input: SubtitleInput };

/** What a download of a subtitle track's url does: stream the file, or a job that writes vtt or srt. */
export function planSubtitleDownload(sub: StoredSubtitle, body: DownloadRequest): SubtitlePlan {
  if (body.subtitles !== undefined)
    throw invalid(
      '"subtitles" embeds tracks into a video; url names a subtitle track. Give the video source\'s url instead.',
    );
  const format = body.format;
  if (format !== undefined && !SUBTITLE_FORMATS.has(format))
    throw invalid(`A subtitle track is downloaded as vtt or srt, not ${format}.`);
  const file = sub.format === 'vtt' || sub.format === 'srt' || sub.format === 'ttml';
  if (file && (format === undefined || format === sub.format))
    return { kind: 'direct', mime_type: MIME[sub.format], ext: sub.format };
  const output = format === 'srt' ? 'srt' : 'vtt';
  return { kind: 'job', operation: file ? 'convert' : 'remux', format: output, input: toSubtitleInput(sub) };
}

// A sidecar file first (nothing to join), then a playlist, then DASH segments.
const PREFERENCE: Record<StoredSubtitle['format'], number> = { vtt: 0, srt: 1, hls: 2, dash: 3, ttml: 4 };

/**
 * The item's track for each asked language (exact, else ignoring case): people's before machine
 * ones, then the format easiest to read. A language the item lacks is a client error naming those it has.
 */
export function pickTracks(tracks: readonly StoredSubtitle[], languages: readonly string[]): StoredSubtitle[] {
  return languages.map((language) => {
    const exact = tracks.filter((t) => t.language === language);
    const matching = exact.length ? exact : tracks.filter((t) => t.language.toLowerCase() === language.toLowerCase());
    if (matching.length === 0) {
      const known = [...new Set(tracks.map((t) => t.language))];
      throw invalid(
        known.length
          ? `This media item has no subtitles in "${language}"; it has: ${known.slice(0, 20).join(', ')}.`
          : 'This media item has no subtitles to embed.',
      );
    }
    const usable = matching.filter((t) => t.format !== 'ttml' && t.format !== 'dash');
    if (usable.length === 0) {
      throw invalid(
        matching.some((t) => t.format === 'dash')
          ? SEGMENTED_DASH
          : `The "${language}" subtitles are TTML, which cannot be embedded; download the track on its own instead.`,
      );
    }
    return [...usable].sort(
      (a, b) =>
        Number(a.auto_generated === true) - Number(b.auto_generated === true) ||
        PREFERENCE[a.format] - PREFERENCE[b.format],
    )[0];
  });
}
