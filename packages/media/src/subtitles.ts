// Subtitle tracks in ffmpeg commands: a track written alone as WebVTT or SRT (a subtitle download),
// and tracks embedded beside the media (mov_text in MP4, WebVTT in Matroska and WebM), each tagged
// with its language as the container expects it. Pure builders, like operations.ts.
import { iso6392, iso6392TTo2B } from 'iso-639-2';
import type { Container } from '@reelay/contracts';
import { inputArgs, type InputKind, type MediaInput } from './inputs.js';

/** How a track is read: a sidecar file (WebVTT or SRT), an HLS playlist of WebVTT segments, or a DASH text representation. */
export type SubtitleSource = 'file' | 'hls' | 'dash';

export interface SubtitleTrack {
  input: MediaInput;
  source: SubtitleSource;
  /** A DASH track: the representation id to take. */
  representation?: string;
  /** The track's language as the extract named it (`en`, `pt-BR`…); tagged as ISO 639-2. */
  language: string;
  /** Shown by players as the track's name. */
  title?: string;
}

/** One track into a file of its own. */
export interface SubtitleOperation {
  type: 'subtitle';
  track: SubtitleTrack;
  format: 'vtt' | 'srt';
}

const KIND: Record<SubtitleSource, InputKind> = { file: 'subtitles', hls: 'hls_subtitles', dash: 'dash_subtitles' };

const BY_ALPHA2 = new Map(iso6392.flatMap((l) => (l.iso6391 ? [[l.iso6391, l.iso6392B] as const] : [])));
const ALPHA3B = new Set(iso6392.map((l) => l.iso6392B));

/**
 * The ISO 639-2 (bibliographic) code MP4 and Matroska tag a track with: `en` and `en-US` → `eng`,
 * `fr` → `fre`, `deu` → `ger`; anything unknown → `und` (MP4 can only store three letters).
 */
export function iso639(language: string): string {
  const primary = language.toLowerCase().split(/[-_]/)[0];
  if (primary.length === 2) return BY_ALPHA2.get(primary) ?? 'und';
  if (primary.length === 3) return ALPHA3B.has(primary) ? primary : (iso6392TTo2B[primary] ?? 'und');
  return 'und';
}

/** `-i` arguments of a track: only the demuxers a subtitle track may need. */
export function subtitleInputArgs(track: SubtitleTrack): string[] {
  return inputArgs(track.input, { kind: KIND[track.source] });
}

function trackMap(track: SubtitleTrack, inputIndex: number): string {
  if (track.representation === undefined) return `${inputIndex}:s:0`;
  if (!/^[\w.\-=+/]+$/.test(track.representation))
    throw new TypeError(`unsupported DASH representation id: ${track.representation}`);
  // Its subtitle stream only: an audio or video representation may carry the same id.
  return `${inputIndex}:s:m:id:${track.representation}`;
}

function tags(track: SubtitleTrack, outputIndex: number): string[] {
  const title = track.title ? ['-metadata:s:s:' + outputIndex, `title=${track.title.replace(/[\r\n\0]/g, ' ')}`] : [];
  return [`-metadata:s:s:${outputIndex}`, `language=${iso639(track.language)}`, ...title];
}

/** The codec a container stores text in: MP4 has only mov_text (tx3g); Matroska and WebM take WebVTT. */
export function subtitleCodec(container: Container): string {
  return container === 'mp4' ? 'mov_text' : 'webvtt';
}

/**
 * Input and output arguments that add `tracks` to a command whose media inputs are the first
 * `mediaInputs` inputs. Output options come after the media's own codec options, so `-c:s` wins over
 * an earlier `-c copy` for the subtitle streams only.
 */
export function embedArgs(
  tracks: readonly SubtitleTrack[],
  mediaInputs: number,
  container: Container,
): { inputArgs: string[]; outputArgs: string[] } {
  const input: string[] = [];
  const maps: string[] = [];
  const meta: string[] = [];
  tracks.forEach((track, i) => {
    input.push(...subtitleInputArgs(track));
    maps.push('-map', trackMap(track, mediaInputs + i));
    meta.push(...tags(track, i));
  });
  return { inputArgs: input, outputArgs: tracks.length ? [...maps, '-c:s', subtitleCodec(container), ...meta] : [] };
}

/** A track alone, as WebVTT or SRT. */
export function subtitleArgs(op: SubtitleOperation): { inputArgs: string[]; outputArgs: string[] } {
  const codec = op.format === 'srt' ? 'srt' : 'webvtt';
  return {
    inputArgs: subtitleInputArgs(op.track),
    outputArgs: [
      '-map',
      trackMap(op.track, 0),
      '-c:s',
      codec,
      ...tags(op.track, 0),
      '-f',
      op.format === 'srt' ? 'srt' : 'webvtt',
    ],
  };
}
