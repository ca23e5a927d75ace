// Option values checked before any request: the server URL, the page URL, --clip's START-END[,MODE],
// --items, --source and --page.
import { UsageError } from './errors.js';

export function parseServer(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--server needs an http(s) URL such as http://127.0.0.1:8080, not "${raw}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server needs an http(s) URL, not "${raw}".`);
  return url;
}

/** `90`, `1:30`, `1:02:03.5` → seconds (millisecond precision). */
function seconds(raw: string): number {
  if (!/^\d+(:\d{1,2}){0,2}(\.\d+)?$/.test(raw))
    throw new UsageError(`--clip times look like 90, 1:30 or 1:02:03.5, not "${raw}".`);
  const value = raw.split(':').reduce((total, part) => total * 60 + Number(part), 0);
  return Math.round(value * 1000) / 1000;
}

export interface ClipOption {
  start: number;
  end: number;
  mode?: 'fast' | 'precise';
}

/** `START-END[,precise|,fast]` → DESIGN.md's `clip: {start, end, mode?}`, with end after start. */
export function parseClip(raw: string): ClipOption {
  const [range, mode, ...more] = raw.split(',').map((p) => p.trim());
  if (more.length || (mode !== undefined && mode !== 'precise' && mode !== 'fast'))
    throw new UsageError(
      `--clip takes START-END with an optional ,precise or ,fast, e.g. 1:30-2:00,precise, not "${raw}".`,
    );
  const [start, end, ...rest] = range.split('-');
  if (end === undefined || rest.length) throw new UsageError(`--clip takes START-END, e.g. 1:30-2:00, not "${raw}".`);
  const clip: ClipOption = { start: seconds(start.trim()), end: seconds(end.trim()) };
  if (clip.end <= clip.start) throw new UsageError(`--clip ends before it starts: "${raw}".`);
  if (mode) clip.mode = mode as ClipOption['mode'];
  return clip;
}

/** The page to read: an absolute http(s) URL of at most 2048 characters, as the server takes. */
export function parseUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    /* below */
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname)
    throw new UsageError(
      `"${raw}" is not a web address: give the page's full http(s) URL, e.g. https://example.com/video.`,
    );
  if (raw.length > 2048) throw new UsageError('the URL is longer than 2048 characters.');
  return raw;
}

/** Which items of a page: every one, or numbers and ranges counted from 1 (`1,3-5`). */
export type ItemSelection = 'all' | number[];

const MAX_ITEM = 10_000;

export function parseItems(raw: string): ItemSelection {
  const value = raw.trim().toLowerCase();
  if (value === 'all') return 'all';
  const picked = new Set<number>();
  for (const part of value.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    const from = Number(m?.[1]);
    const to = m?.[2] === undefined ? from : Number(m[2]);
    if (!m || from < 1 || to < from || to > MAX_ITEM)
      throw new UsageError(`--items takes all, or numbers and ranges from 1 such as 1,3-5, not "${raw}".`);
    for (let i = from; i <= to; i += 1) picked.add(i);
  }
  return [...picked].sort((a, b) => a - b);
}

/** --source N: a source number as `reelay extract` shows it (from 1). */
export function parseSourceNumber(raw: string): number {
  if (!/^\d{1,4}$/.test(raw.trim()) || Number(raw) < 1)
    throw new UsageError(`--source takes a source number from \`reelay extract\`, such as 2, not "${raw}".`);
  return Number(raw);
}

/** --duration for a recording: `90` (seconds), `30m`, `1h30m`, `2h`, `45s`, or `1:30:00` → whole seconds (at least 1). */
export function parseDuration(raw: string): number {
  const units = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(raw);
  let value: number | undefined;
  if (units && raw !== '') value = Number(units[1] ?? 0) * 3600 + Number(units[2] ?? 0) * 60 + Number(units[3] ?? 0);
  else if (/^\d+(:\d{1,2}){0,2}$/.test(raw))
    value = raw.split(':').reduce((total, part) => total * 60 + Number(part), 0);
  if (value === undefined || value < 1)
    throw new UsageError(`--duration looks like 90, 30m, 1h30m or 1:30:00 (at least a second), not "${raw}".`);
  return value;
}

/** --page N of `reelay extract`: a collection's page from 1 (100 entries a page; at most 50 pages are listed). */
export function parsePage(raw: string): number {
  if (!/^\d{1,3}$/.test(raw.trim()) || Number(raw) < 1)
    throw new UsageError(`--page takes a page number from 1, such as 2, not "${raw}".`);
  return Number(raw);
}
