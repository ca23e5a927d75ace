// Where the ffmpeg and ffprobe binaries are: configuration first, then ffmpeg-static, then PATH.
import fs from 'node:fs';
import { createRequire } from 'node:module';

export interface BinaryConfig {
  FFMPEG_PATH?: string;
  FFPROBE_PATH?: string;
}

export interface BinaryDeps {
  /** ffmpeg-static's binary path (it may name a file that was never downloaded). */
  staticPath: () => string | null;
  exists: (file: string) => boolean;
}

const require = createRequire(import.meta.url);

/**
 * ffmpeg-static's path. Loaded with require because the package is CommonJS (`module.exports = path`)
 * while its typings claim a default export; it never checks that the file exists, and its install
 * script (which downloads the binary) is skipped in this workspace, so the file is usually absent.
 */
export function ffmpegStaticPath(): string | null {
  const value: unknown = require('ffmpeg-static');
  return typeof value === 'string' && value !== '' ? value : null;
}

const defaultDeps: BinaryDeps = { staticPath: ffmpegStaticPath, exists: (file) => fs.existsSync(file) };

/**
 * FFMPEG_PATH → ffmpeg-static's binary if the file exists → `ffmpeg` on PATH. An explicit FFMPEG_PATH
 * is used as given: if it is wrong the first run fails loudly rather than silently using another build.
 * Without a config the process environment is read (the config package has already validated it).
 */
export function resolveFfmpeg(config: BinaryConfig = process.env, deps: BinaryDeps = defaultDeps): string {
  if (config.FFMPEG_PATH) return config.FFMPEG_PATH;
  const bundled = deps.staticPath();
  if (bundled && deps.exists(bundled)) return bundled;
  return 'ffmpeg';
}

/** FFPROBE_PATH → `ffprobe` on PATH (ffmpeg-static ships no ffprobe). */
export function resolveFfprobe(config: BinaryConfig = process.env): string {
  return config.FFPROBE_PATH || 'ffprobe';
}
