// Where the ffmpeg and ffprobe binaries are: the configured path, else the name looked up on PATH.
// The config package has read and validated FFMPEG_PATH/FFPROBE_PATH; nothing here reads the environment.

export interface BinaryConfig {
  FFMPEG_PATH?: string;
  FFPROBE_PATH?: string;
}

/**
 * FFMPEG_PATH → `ffmpeg` on PATH. An explicit FFMPEG_PATH is used as given: if it is wrong the first
 * run fails loudly rather than silently using another build.
 */
export function resolveFfmpeg(config: BinaryConfig): string {
  return config.FFMPEG_PATH || 'ffmpeg';
}

/** FFPROBE_PATH → `ffprobe` on PATH. */
export function resolveFfprobe(config: BinaryConfig): string {
  return config.FFPROBE_PATH || 'ffprobe';
}
