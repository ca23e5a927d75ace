// From a job payload to the ffmpeg operation that makes its file, and what of the source it keeps
// (kept.ts). The plan follows the inputs (two progressive files, one or two HLS/DASH streams, one
// progressive file) and the requested format; the payload's `operation` names the job for people and
// metrics and is not second-guessed here. Which steps run it is steps/choose.ts's question.
import {
  AUDIO_FORMATS,
  mediaFilename,
  ReelayError,
  SUBTITLE_FORMATS,
  type Container,
  type JobInput,
  type JobPayload,
  type ManifestKind,
  type OutputFormat,
  type SubtitleInput,
} from '@reelay/contracts';
import {
  codecPair,
  codecsFit,
  containerFor,
  isContainer,
  isSettableHeader,
  mimeForContainer,
  outputFormat,
  type InputKind,
  type InputSpec,
  type MediaOperation,
  type SubtitleTrack,
} from '@reelay/media';
import { toProxyUrl } from './https-names.js';
import { keptIntervals, type KeptIntervals } from './kept.js';

export interface JobPlan {
  operation: MediaOperation;
  /** The artifact's name and type. */
  filename: string;
  contentType: string;
  /** What ffprobe reads for the duration when the payload has none. */
  probe: { input: InputSpec; kind: InputKind; aes128: boolean };
  /** The stretches of the source the smart cut renders into the file; absent: the operation makes it whole. */
  kept?: KeptIntervals;
}

function invalid(message: string): ReelayError {
  return new ReelayError('invalid_request', message);
}

function segmented(input: JobInput): ManifestKind | undefined {
  return input.stream_profile === 'hls' || input.stream_profile === 'dash' ? input.stream_profile : undefined;
}

/** The URL ffmpeg is given (through the proxy) and the recorded headers it may send. */
export function toInputSpec(input: JobInput): InputSpec {
  const headers = Object.fromEntries(Object.entries(input.headers ?? {}).filter(([name]) => isSettableHeader(name)));
  return Object.keys(headers).length > 0 ? { url: toProxyUrl(input.url), headers } : { url: toProxyUrl(input.url) };
}

/**
 * The container when none was asked for: from the codecs, or mp4 for HLS and DASH whose codecs are
 * unknown (they are nearly always H.264 and AAC). A requested container wins.
 */
function pickContainer(
  format: OutputFormat | undefined,
  videoCodec: string | undefined,
  audioCodec: string | undefined,
  kind: ManifestKind | undefined,
): Container {
  if (format !== undefined && isContainer(format)) return format;
  if (videoCodec === undefined && audioCodec === undefined) return kind ? 'mp4' : 'mkv';
  return containerFor(videoCodec, audioCodec);
}

/** Whether streams can be copied into the container; unknown codecs are trusted only for mp4 and mkv. */
function copyable(container: Container, videoCodec: string | undefined, audioCodec: string | undefined): boolean {
  if (videoCodec === undefined && audioCodec === undefined) return container !== 'webm';
  return codecsFit(container, videoCodec, audioCodec);
}

function planSingle(payload: JobPayload, input: JobInput): MediaOperation {
  const { videoCodec, audioCodec } = codecPair(input.codecs);
  const kind = segmented(input);
  const spec = toInputSpec(input);
  if (kind === undefined) {
    if (payload.format === undefined) throw invalid('Converting a single file needs a format.');
    return { type: 'convert', input: spec, format: payload.format, videoCodec, audioCodec };
  }
  const representation = kind === 'dash' ? input.representation : undefined;
  const representationType = kind === 'dash' ? input.representation_type : undefined;
  const aes128 = kind === 'hls'; // an HLS playlist may be encrypted; crypto only wraps http
  const format =
    payload.format !== undefined && !isContainer(payload.format)
      ? payload.format
      : pickContainer(payload.format, videoCodec, audioCodec, kind);
  if (isContainer(format) && copyable(format, videoCodec, audioCodec)) {
    return {
      type: 'remux',
      manifest: kind,
      input: spec,
      representation,
      representationType,
      container: format,
      audioCodec,
      aes128,
    };
  }
  return {
    type: 'convert',
    input: spec,
    manifest: kind,
    representation,
    representationType,
    aes128,
    format,
    videoCodec,
    audioCodec,
  };
}

function planPair(payload: JobPayload, video: JobInput, audio: JobInput): MediaOperation {
  const videoCodec = codecPair(video.codecs).videoCodec;
  const audioCodec = codecPair(audio.codecs).audioCodec;
  // An audio format from a pair is the audio member converted on its own.
  if (payload.format !== undefined && AUDIO_FORMATS.has(payload.format)) return planSingle(payload, audio);
  const kind = segmented(video);
  if (kind === undefined && segmented(audio) === undefined) {
    const container = pickContainer(payload.format, videoCodec, audioCodec, undefined);
    return {
      type: 'merge',
      videoInput: toInputSpec(video),
      audioInput: toInputSpec(audio),
      container,
      videoCodec,
      audioCodec,
    };
  }
  if (kind === undefined || segmented(audio) !== kind)
    throw invalid('A pair must be two progressive files, or two HLS or two DASH streams.');
  const container = pickContainer(payload.format, videoCodec, audioCodec, kind);
  if (!copyable(container, videoCodec, audioCodec))
    throw invalid(`The pair's codecs cannot be stored in ${container} without re-encoding; ask for another format.`);
  return {
    type: 'remux',
    manifest: kind,
    videoInput: toInputSpec(video),
    audioInput: toInputSpec(audio),
    videoRepresentation: kind === 'dash' ? video.representation : undefined,
    audioRepresentation: kind === 'dash' ? audio.representation : undefined,
    container,
    audioCodec,
    aes128: kind === 'hls',
  };
}

/** A subtitle track as ffmpeg reads it: through the proxy, with its recorded headers. */
function toTrack(sub: SubtitleInput): SubtitleTrack {
  const spec = toInputSpec({ url: sub.url, stream_profile: 'muxed_progressive', headers: sub.headers });
  const source = sub.format === 'hls' || sub.format === 'dash' ? sub.format : 'file';
  return {
    input: spec,
    source,
    representation: sub.representation,
    language: sub.language,
    ...(sub.label ? { title: sub.label } : {}),
  };
}

/** A subtitle download: its one track written as WebVTT or SRT. */
function planSubtitle(payload: JobPayload): JobPlan {
  const [sub, extra] = payload.subtitles ?? [];
  if (
    sub === undefined ||
    extra !== undefined ||
    payload.format === undefined ||
    !SUBTITLE_FORMATS.has(payload.format)
  ) {
    throw invalid('A job reads one or two media inputs, or one subtitle track written as vtt or srt.');
  }
  const format = payload.format === 'srt' ? 'srt' : 'vtt';
  const track = toTrack(sub);
  const kind = track.source === 'file' ? 'subtitles' : track.source === 'hls' ? 'hls_subtitles' : 'dash_subtitles';
  return {
    operation: { type: 'subtitle', track, format },
    filename: mediaFilename(payload.basename, format),
    contentType: mimeForContainer(format),
    probe: { input: typeof track.input === 'string' ? { url: track.input } : track.input, kind, aes128: false },
  };
}

export function planJob(payload: JobPayload): JobPlan {
  if (payload.inputs.length === 0) return planSubtitle(payload);
  if (payload.format !== undefined && SUBTITLE_FORMATS.has(payload.format))
    throw invalid(`Media cannot be converted to ${payload.format}; download a subtitle track's url instead.`);
  const [first, second] = payload.inputs;
  for (const input of payload.inputs) {
    if (input.stream_profile === 'image') throw invalid('Images are delivered as they are, not by a job.');
  }
  const planned = second === undefined ? planSingle(payload, first) : planPair(payload, first, second);
  // The clip and tags go into whichever operation makes the file; the cover is added once fetched.
  const operation: MediaOperation =
    planned.type === 'subtitle' ? planned : { ...planned, clip: payload.clip, tags: payload.tags };
  const format = outputFormat(operation);
  if (payload.subtitles?.length) {
    if (operation.type === 'subtitle' || !isContainer(format))
      throw invalid(`Subtitles are embedded in a video: choose mp4, webm or mkv, not ${format}.`);
    operation.subtitles = payload.subtitles.map(toTrack);
  }
  const probed =
    second !== undefined && payload.format !== undefined && AUDIO_FORMATS.has(payload.format) ? second : first;
  const kept = keptIntervals(payload, operation);
  return {
    operation,
    filename: mediaFilename(payload.basename, format),
    contentType: mimeForContainer(format),
    probe: {
      input: toInputSpec(probed),
      kind: segmented(probed) ?? 'progressive',
      aes128: segmented(probed) === 'hls',
    },
    ...(kept ? { kept } : {}),
  };
}
