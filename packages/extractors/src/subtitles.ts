// Subtitle tracks of a result: languages normalised, URLs de-duplicated against the sources and each
// other, unfetchable ones dropped, tracks people made before machine ones, at most
// MAX_ITEM_SUBTITLES an item. Parsers only fill SubtitleDraft lists.
import {
  LanguageSchema,
  MAX_ITEM_SUBTITLES,
  type Subtitle,
  type SubtitleFormat,
  type SubtitleRecord,
} from '@reelay/contracts';
import type { SubtitleDraft } from './types.js';

/** The formats a sidecar file's extension or MIME type says. */
const BY_EXT: Record<string, SubtitleFormat> = {
  vtt: 'vtt',
  webvtt: 'vtt',
  srt: 'srt',
  ttml: 'ttml',
  dfxp: 'ttml',
  xml: 'ttml',
  m3u8: 'hls',
  mpd: 'dash',
};
const BY_MIME: Record<string, SubtitleFormat> = {
  'text/vtt': 'vtt',
  'application/x-subrip': 'srt',
  'text/srt': 'srt',
  'application/ttml+xml': 'ttml',
  'application/vnd.apple.mpegurl': 'hls',
  'application/x-mpegurl': 'hls',
  'application/dash+xml': 'dash',
};

/** A sidecar's format from its MIME type, else its URL's extension; undefined when neither says. */
export function subtitleFormat(url: string, mime?: string): SubtitleFormat | undefined {
  const byMime = mime ? BY_MIME[mime.split(';')[0].trim().toLowerCase()] : undefined;
  if (byMime) return byMime;
  try {
    const ext = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
    return ext ? BY_EXT[ext] : undefined;
  } catch {
    return undefined;
  }
}

/** A language as the contract takes it: trimmed, unsafe characters dropped, `und` when none is left. */
export function normaliseLanguage(raw: string | undefined | null): string {
  const cleaned = (raw ?? '')
    .trim()
    .replace(/[^A-Za-z0-9_-]/g, '')
    .replace(/^[-_]+/, '')
    .slice(0, 35);
  return LanguageSchema.safeParse(cleaned).success ? cleaned : 'und';
}

export interface SubtitleAssembly {
  subtitles: Subtitle[];
  records: Omit<SubtitleRecord, 'media_index' | 'title'>[];
}

/**
 * Tracks one result lists in all, at most: a playlist of many videos with ~150 machine translations
 * each would otherwise put tens of thousands of keys into the registry in one command.
 */
export const MAX_RESULT_SUBTITLES = 1000;

/**
 * The public list and the registry records of one item's tracks. `seen` holds every URL taken so
 * far in the result (sources first), `refused` says whether the egress guard would refuse one, and
 * `room` is how many more the result may list.
 */
export function assembleSubtitles(
  drafts: readonly SubtitleDraft[] | undefined,
  seen: Set<string>,
  refused: (url: string) => boolean,
  room = MAX_ITEM_SUBTITLES,
): SubtitleAssembly {
  const out: SubtitleAssembly = { subtitles: [], records: [] };
  const ordered = [...(drafts ?? [])].sort(
    (a, b) => Number(a.auto_generated === true) - Number(b.auto_generated === true),
  );
  const limit = Math.min(MAX_ITEM_SUBTITLES, room);
  for (const d of ordered) {
    if (out.subtitles.length >= limit) break;
    if (!d.url || seen.has(d.url) || refused(d.url)) continue;
    seen.add(d.url);
    const sub: Subtitle = { language: normaliseLanguage(d.language), url: d.url, format: d.format };
    const label = d.label?.trim().slice(0, 200);
    if (label) sub.label = label;
    if (d.auto_generated) sub.auto_generated = true;
    out.subtitles.push(sub);
    out.records.push({
      kind: 'subtitle',
      ...sub,
      ...(d.codecs ? { codecs: d.codecs } : {}),
      ...(d.headers ? { headers: d.headers } : {}),
    });
  }
  return out;
}
