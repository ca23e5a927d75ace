// Option values checked before any request: the server URL and --clip's START-END.
import { UsageError } from './errors.js';

export function parseServer(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--server needs an http(s) URL such as http://127.0.0.1:8080, not "${raw}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server needs an http(s) URL, not "${raw}".`);
  return url;
}

/** `90`, `1:30`, `1:02:03.5` → seconds (millisecond precision). */
function seconds(raw: string): number {
  if (!/^\d+(:\d{1,2}){0,2}(\.\d+)?$/.test(raw)) throw new UsageError(`--clip times look like 90, 1:30 or 1:02:03.5, not "${raw}".`);
  const value = raw.split(':').reduce((total, part) => total * 60 + Number(part), 0);
  return Math.round(value * 1000) / 1000;
}

/** `START-END` → DESIGN.md's `clip: {start, end}`, with end after start. */
export function parseClip(raw: string): { start: number; end: number } {
  const [start, end, ...rest] = raw.split('-');
  if (end === undefined || rest.length) throw new UsageError(`--clip takes START-END, e.g. 1:30-2:00, not "${raw}".`);
  const clip = { start: seconds(start.trim()), end: seconds(end.trim()) };
  if (clip.end <= clip.start) throw new UsageError(`--clip ends before it starts: "${raw}".`);
  return clip;
}
