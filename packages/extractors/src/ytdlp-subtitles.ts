// yt-dlp's `subtitles` and `automatic_captions` (language → list of files in several formats) as
// subtitle tracks: one track per language and kind, in the first format reelay can deliver.
import type { SubtitleFormat } from '@reelay/contracts';
import type { SubtitleDraft } from './types.js';
import { obj, str, type Json } from './values.js';

// yt-dlp's `ext` of a subtitle file, in the order of preference: WebVTT converts and embeds
// everywhere; YouTube's json3/srv* are its own formats and are left out.
const PREFERRED: [string, SubtitleFormat][] = [
  ['vtt', 'vtt'],
  ['srt', 'srt'],
  ['ttml', 'ttml'],
  ['dfxp', 'ttml'],
];

function pick(files: unknown[]): { url: string; format: SubtitleFormat; name?: string } | undefined {
  const entries = files.map((f) => obj(f)).filter((f): f is Json => f !== undefined);
  for (const [ext, format] of PREFERRED) {
    for (const f of entries) {
      const url = str(f.url);
      if (!url || !/^https?:\/\//i.test(url) || str(f.ext)?.toLowerCase() !== ext) continue;
      // A subtitle yt-dlp reads through a playlist (protocol m3u8_native) is an HLS track.
      const hls = /^m3u8/.test(str(f.protocol) ?? '');
      return { url, format: hls ? 'hls' : format, name: str(f.name) };
    }
  }
  return undefined;
}

function tracks(field: unknown, auto: boolean): SubtitleDraft[] {
  const byLanguage = obj(field);
  if (!byLanguage) return [];
  const out: SubtitleDraft[] = [];
  for (const [language, files] of Object.entries(byLanguage)) {
    // live_chat is a replay of the chat as JSON, not a subtitle.
    if (language === 'live_chat' || !Array.isArray(files)) continue;
    const chosen = pick(files);
    if (!chosen) continue;
    out.push({
      language,
      url: chosen.url,
      format: chosen.format,
      ...(chosen.name ? { label: chosen.name } : {}),
      ...(auto ? { auto_generated: true } : {}),
    });
  }
  return out;
}

/** An entry's subtitle tracks, made by people first, then the automatic ones. */
export function ytdlpSubtitles(entry: Json, headers?: Record<string, string>): SubtitleDraft[] {
  const all = [...tracks(entry.subtitles, false), ...tracks(entry.automatic_captions, true)];
  return headers ? all.map((t) => ({ ...t, headers: { ...headers } })) : all;
}
