// How `reelay extract` and `reelay job` print for a person (aligned columns on stdout); --json
// prints the server's data instead, for programs.
import type { ExtractResult, JobView, Source } from './api.js';
import { formatBytes } from './progress.js';

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const tracks = (s: Source) => {
  if (s.stream_profile === 'image') return 'image';
  const video = s.stream_profile !== 'audio_only' && s.has_video !== false;
  const audio = s.stream_profile !== 'video_only' && s.has_audio !== false;
  return video && audio ? 'video+audio' : video ? 'video' : 'audio';
};

/** 1280x720, or 720p when only the height is known. */
const resolution = (s: Source) => (s.width && s.height ? `${s.width}x${s.height}` : s.height ? `${s.height}p` : '');

/**
 * Text from the internet made safe to print on a terminal: control characters (an escape sequence in
 * a feed's title could move the cursor, retitle the window or hide lines) become spaces.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, ' ');
}

/** At most `max` characters, cut with an ellipsis. */
const clipped = (text: string, max: number) =>
  [...text].length > max ? `${[...text].slice(0, max - 1).join('')}…` : text;

/** 65 → "1:05", 3725 → "1:02:05". */
export function clock(seconds: number): string {
  const s = Math.round(seconds);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

/** A URL as one shell word: as it is when plain, else in single quotes (`?` and `&` mean things to shells). */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_\-.:/%~+@,=]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A playlist, channel or feed: its entries numbered as `reelay get --items` takes them. */
function collectionText(result: ExtractResult): string {
  const entries = result.entries ?? [];
  const count = result.collection?.entry_count;
  const kind = result.collection?.kind ?? 'collection';
  const size = count !== undefined ? `: ${count} entr${count === 1 ? 'y' : 'ies'}` : '';
  const lines = [`${printable(result.title)} (${result.platform}, ${kind}${size})`, ''];
  if (entries.length === 0) return `${[...lines, 'no entries'].join('\n')}\n`;
  const withDuration = entries.some((e) => e.duration !== undefined);
  const withDate = entries.some((e) => e.upload_date !== undefined);
  const rows = [['#', 'TITLE', ...(withDuration ? ['DURATION'] : []), ...(withDate ? ['DATE'] : [])]];
  for (const e of entries)
    rows.push([
      String(e.index),
      clipped(printable(e.title ?? e.url), 70),
      ...(withDuration ? [e.duration !== undefined ? clock(e.duration) : ''] : []),
      ...(withDate ? [e.upload_date ?? ''] : []),
    ]);
  lines.push(table(rows));
  return `${lines.join('\n')}\n`;
}

/** What to do next after a collection's page, for stderr: how to download, and how to see more. */
export function collectionHints(url: string, result: ExtractResult, page: number): string[] {
  const entries = result.entries ?? [];
  if (result.content_type !== 'collection' || entries.length === 0) return [];
  const first = entries[0].index;
  const last = entries[entries.length - 1].index;
  const some = last > first ? `${first}-${Math.min(last, first + 2)}` : String(first);
  const hints = [
    `download every entry with \`reelay get ${shellWord(url)}\`, or some by number: \`reelay get ${shellWord(url)} --items ${some}\``,
  ];
  const count = result.collection?.entry_count;
  if (result.collection?.next_cursor)
    hints.push(
      `this is page ${page} (entries ${first}-${last}${count !== undefined ? ` of ${count}` : ''}); the next page: \`reelay extract ${shellWord(url)} --page ${page + 1}\``,
    );
  return hints;
}

/** Items and sources are numbered from 1, as `reelay get --items N --source N` takes them. */
export function extractText(result: ExtractResult): string {
  if (result.content_type === 'collection') return collectionText(result);
  const lines = [`${printable(result.title)} (${result.platform}, ${result.content_type})`];
  for (const [i, item] of result.media.entries()) {
    const rows = [['#', 'QUALITY', 'TRACKS', 'PROFILE', 'EXT', 'RESOLUTION', 'BITRATE', 'CODECS']];
    for (const [n, s] of item.sources.entries()) {
      rows.push([
        String(n + 1),
        s.quality,
        tracks(s),
        s.stream_profile,
        s.ext ?? '',
        resolution(s),
        s.bitrate ? `${Math.round(s.bitrate / 1000)}k` : '',
        s.codecs ?? '',
      ]);
    }
    lines.push(
      '',
      `item ${i + 1}: ${item.type}${item.title ? `: ${printable(item.title)}` : ''}${item.duration ? ` (${item.duration.toFixed(1)} s)` : ''}`,
      table(rows),
    );
  }
  return `${lines.join('\n')}\n`;
}

export function jobText(job: JobView): string {
  const rows: [string, string | undefined][] = [
    ['id', job.id],
    ['status', job.status],
    ['operation', job.operation],
    ['progress', `${job.progress}%`],
    ['created', job.created_at],
    ['started', job.started_at],
    ['finished', job.finished_at],
    ['error', job.error && `${job.error.message} (${job.error.code})`],
    [
      'file',
      job.artifact && `${job.artifact.filename} (${formatBytes(job.artifact.size)}, ${job.artifact.content_type})`,
    ],
    ['artifact', job.artifact?.url],
    ['expires', job.artifact?.expires_at],
  ];
  return `${table(rows.filter((r): r is [string, string] => r[1] !== undefined).map(([k, v]) => [`${k}:`, v]))}\n`;
}
