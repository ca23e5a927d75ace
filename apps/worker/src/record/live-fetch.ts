// The recorder's two fetches through the egress guard: a playlist (small, bounded text) and a
// segment (bounded bytes, a deadline, retries). A segment that still fails is reported, not thrown:
// the recorder turns it into a gap.
import { setTimeout as delay } from 'node:timers/promises';
import type { Egress } from '@reelay/egress';
import { MAX_LIVE_MANIFEST_BYTES } from '@reelay/manifests';
export const SEGMENT_ATTEMPTS = 3;

export type LiveEgress = Pick<Egress, 'fetchText' | 'open' | 'read'>;

export interface FetchOptions {
  headers?: Record<string, string>;
  signal: AbortSignal;
  deadlineMs: number;
}

export async function fetchPlaylist(
  egress: LiveEgress,
  url: string,
  options: FetchOptions,
): Promise<{ url: string; text: string }> {
  const res = await egress.fetchText(url, {
    headers: options.headers,
    signal: options.signal,
    deadlineMs: options.deadlineMs,
    // A live playlist or MPD larger than this is refused (thousands of segments fit in far less).
    maxBytes: MAX_LIVE_MANIFEST_BYTES,
  });
  if (res.status >= 400) throw new Error(`the playlist answered HTTP ${res.status}`);
  return { url: res.url, text: res.text };
}

/** The segment's bytes, or the last failure's message once every attempt failed (or the signal aborted). */
export async function fetchSegment(
  egress: LiveEgress,
  url: string,
  maxBytes: number,
  options: FetchOptions,
): Promise<Buffer | { failed: string }> {
  let last = 'not fetched';
  for (let attempt = 0; attempt < SEGMENT_ATTEMPTS && !options.signal.aborted; attempt++) {
    if (attempt > 0) await delay(250 * 2 ** attempt, undefined, { signal: options.signal }).catch(() => undefined);
    try {
      const res = await egress.open(url, {
        headers: options.headers,
        signal: options.signal,
        deadlineMs: options.deadlineMs,
        identity: true,
      });
      if (res.status >= 400) {
        res.body.destroy();
        last = `HTTP ${res.status}`;
        continue;
      }
      return await egress.read(res.body, maxBytes);
    } catch (err) {
      last = (err as Error).message;
    }
  }
  return { failed: last };
}
