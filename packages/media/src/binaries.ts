// Where the ffmpeg and ffprobe binaries are, and where that choice came from (the apps' /healthz and
// start-up log say it). The config package has read and validated FFMPEG_PATH/FFPROBE_PATH; nothing
// here reads the environment.
import fs from 'node:fs';
import { createRequire } from 'node:module';

export interface BinaryConfig {
  FFMPEG_PATH?: string;
  FFPROBE_PATH?: string;
}

/** Which rule picked a binary: the setting, the ffmpeg-static package's download, or the PATH lookup. */
export type BinarySource = 'FFMPEG_PATH' | 'FFPROBE_PATH' | 'ffmpeg-static' | 'PATH';

export interface LocatedBinary {
  /** An absolute path, or a bare name that the PATH lookup resolves when it is run. */
  path: string;
  source: BinarySource;
}

/** What the resolution asks of the machine, injected so the order is testable without one. */
export interface BinaryProbe {
  /** The path ffmpeg-static names for this platform (null where it has no build, undefined when not installed). */
  ffmpegStatic(): string | null | undefined;
  /** Whether a regular file is there. */
  isFile(file: string): boolean;
}

/**
 * The optional ffmpeg-static dependency. Its install script downloads the binary and, on a machine
 * without internet, fails: pnpm then keeps the package without the file (or skips it), so its path
 * counts only when the file is really there.
 */
export const installedProbe: BinaryProbe = {
  ffmpegStatic: () => {
    try {
      return createRequire(import.meta.url)('ffmpeg-static') as string | null;
    } catch {
      return undefined;
    }
  },
  isFile: (file) => {
    try {
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  },
};

/**
 * ffmpeg: FFMPEG_PATH → ffmpeg-static's binary where its file exists → `ffmpeg` on PATH. An explicit
 * FFMPEG_PATH is used as given: if it is wrong the first run fails loudly rather than silently using
 * another build. ffprobe: FFPROBE_PATH → `ffprobe` on PATH (ffmpeg-static ships no ffprobe).
 */
export function locateBinaries(
  config: BinaryConfig,
  probe: BinaryProbe = installedProbe,
): { ffmpeg: LocatedBinary; ffprobe: LocatedBinary } {
  return { ffmpeg: locateFfmpeg(config, probe), ffprobe: locateFfprobe(config) };
}

function locateFfprobe(config: BinaryConfig): LocatedBinary {
  return config.FFPROBE_PATH
    ? { path: config.FFPROBE_PATH, source: 'FFPROBE_PATH' }
    : { path: 'ffprobe', source: 'PATH' };
}

function locateFfmpeg(config: BinaryConfig, probe: BinaryProbe): LocatedBinary {
  if (config.FFMPEG_PATH) return { path: config.FFMPEG_PATH, source: 'FFMPEG_PATH' };
  const bundled = probe.ffmpegStatic();
  if (bundled && probe.isFile(bundled)) return { path: bundled, source: 'ffmpeg-static' };
  return { path: 'ffmpeg', source: 'PATH' };
}

/** The ffmpeg to run (see locateBinaries). */
export function resolveFfmpeg(config: BinaryConfig, probe: BinaryProbe = installedProbe): string {
  return locateFfmpeg(config, probe).path;
}

/** The ffprobe to run (see locateBinaries). */
export function resolveFfprobe(config: BinaryConfig): string {
  return locateFfprobe(config).path;
}

/** A binary as /healthz and the start-up log show it: path, where it came from, version once run. */
export interface BinaryReport extends LocatedBinary {
  version?: string;
}

/**
 * The report of both binaries; `versions` are the first lines of their `-version` output
 * ("ffmpeg version 5.1.6-0+deb12u1 Copyright …"), when a check has run them.
 */
export function reportBinaries(
  located: { ffmpeg: LocatedBinary; ffprobe: LocatedBinary },
  versions?: { ffmpeg: string; ffprobe: string },
): { ffmpeg: BinaryReport; ffprobe: BinaryReport } {
  const report = (binary: LocatedBinary, line: string | undefined): BinaryReport => {
    const version = line?.match(/ version (\S+)/)?.[1];
    return version ? { ...binary, version } : { ...binary };
  };
  return { ffmpeg: report(located.ffmpeg, versions?.ffmpeg), ffprobe: report(located.ffprobe, versions?.ffprobe) };
}
