// Whether an HLS master playlist is live: a master says nothing of it, its media playlists do. The
// extract reads one of them (the first source's), once, bounded in bytes and time, and judges it by
// the rule media playlists are judged by (@reelay/manifests' isLiveMediaPlaylist); a variant that is
// itself a master is not followed: one extra fetch, no more. All variants of one master are the
// same broadcast, so the answer holds for every source of the item.
import { isLiveMediaPlaylist, MAX_LIVE_MANIFEST_BYTES } from '@reelay/manifests';
import type { ExtractContext, MediaDraft } from './types.js';

export const VARIANT_DEADLINE_MS = 10_000;

/**
 * The master's items, marked live (item and every source, with no duration) when its first media
 * playlist is live. A variant that cannot be fetched or read leaves the items as they are: a job
 * that reads a live variant later still says so.
 */
export async function judgeMaster(
  media: MediaDraft[],
  ctx: Pick<ExtractContext, 'egress' | 'signal' | 'log'>,
): Promise<MediaDraft[]> {
  const item = media[0];
  const first = item?.sources[0];
  if (!item || !first || item.is_live) return media;
  let live = false;
  try {
    const res = await ctx.egress.fetchText(first.url, {
      headers: first.headers,
      signal: ctx.signal,
      deadlineMs: VARIANT_DEADLINE_MS,
      // A live window is far smaller: a larger playlist is not read to judge its master.
      maxBytes: MAX_LIVE_MANIFEST_BYTES,
    });
    live = res.status < 400 && isLiveMediaPlaylist(res.text);
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    ctx.log?.('could not read a variant of the HLS master to judge whether it is live', {
      url: first.url,
      err: (err as Error).message,
    });
  }
  if (!live) return media;
  return media.map((m) => {
    const { duration: _none, ...rest } = m;
    return { ...rest, is_live: true, sources: m.sources.map((s) => ({ ...s, is_live: true })) };
  });
}
