// What `reelay get` downloads when it chooses on this side (several gallery items, --source N): the
// contracts' chooseSource, the very function the server's page_url downloads use, never a copy.
import { chooseSource, describePick, describeSource, QualitySchema, type Quality } from '@reelay/contracts';
import type { DownloadBody, MediaItem } from './api.js';
import { CliError, UsageError } from './errors.js';

export const AUDIO_FORMATS = ['mp3', 'm4a', 'opus', 'wav'];
export const VIDEO_FORMATS = ['mp4', 'webm', 'mkv'];

export interface Preset {
  quality: Quality;
  audioOnly?: boolean;
  format?: string;
}

export interface Choice {
  body: DownloadBody;
  /** What was picked, for a person: "640x360 video (mp4) + 128k audio (m4a), merged". */
  label: string;
}

/** `best`, `worst`, `720p` or `720` → the server's quality names; anything else is a usage error. */
export function parseQuality(raw: string): Quality {
  const value = raw.trim().toLowerCase();
  const parsed = QualitySchema.safeParse(/^\d+$/.test(value) ? `${value}p` : value);
  if (!parsed.success) throw new UsageError(`-q takes one of ${QualitySchema.options.join(', ')}, not "${raw}".`);
  return parsed.data;
}

/** The preset's choice for one item, as a download body. */
export function chooseFor(item: MediaItem, preset: Preset): Choice {
  const format = preset.format ? { format: preset.format } : {};
  const choice = chooseSource(item, { quality: preset.quality, audio_only: preset.audioOnly, format: preset.format });
  if (choice.kind === 'none')
    throw new CliError(
      `nothing here fits: ${choice.reason} It has: ${choice.available.join(', ')}.`,
      'See what there is with `reelay extract URL`, or pick one with --source N.',
    );
  // Named as the server names its own picks (the Job's source.description), by the same function.
  if (choice.kind === 'pair')
    return {
      body: { video_url: choice.video.url, audio_url: choice.audio.url, ...format },
      label: describePick(choice),
    };
  return { body: { url: choice.source.url, ...format }, label: describePick(choice) };
}

/** --source N: the Nth source of the item as `reelay extract` numbers them (from 1). */
export function pickSource(item: MediaItem, n: number, format?: string): Choice {
  const source = item.sources[n - 1];
  if (!source)
    throw new CliError(
      `there is no source ${n}: this item has ${item.sources.length}.`,
      'See them numbered with `reelay extract URL`.',
    );
  return { body: { url: source.url, ...(format ? { format } : {}) }, label: describeSource(source) };
}
