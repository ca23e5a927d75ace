// What the public-API platform extractors (Bluesky, Mastodon, PeerTube, Streamable, Dailymotion)
// share: one guarded GET of a JSON API whose error answers are read, not thrown (each platform
// explains its errors in its own body shape), endpoint overrides, safe readers for untyped JSON, and
// the few conversions their mappings have in common.
import { ReelayError } from '@reelay/contracts';
import { Parser } from 'htmlparser2';
import { expandManifest } from '../manifest.js';
import type { ExtractContext, SourceDraft } from '../types.js';

export type Json = Record<string, unknown>;

export interface ApiAnswer {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** The parsed body; undefined when it is not JSON (an HTML error page, a proxy's message). */
  json: unknown;
}

/** GETs a JSON API through the egress guard. Error statuses are returned, not thrown. */
export async function getJson(ctx: ExtractContext, url: string, headers: Record<string, string> = {}): Promise<ApiAnswer> {
  const res = await ctx.egress.fetchText(url, { headers: { accept: 'application/json', ...headers }, signal: ctx.signal, allowErrorStatus: true, maxBytes: 2 * 1024 * 1024 });
  let json: unknown;
  try {
    json = JSON.parse(res.text);
  } catch {
    json = undefined;
  }
  const contentType = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return { url: res.url, status: res.status, contentType, json };
}

/**
 * A platform base URL: `ctx.endpoints[key]` (env PLATFORM_<KEY>, for tests and mirrors) or the
 * default, without a trailing slash.
 */
export function endpoint(ctx: ExtractContext, key: string, fallback: string): string {
  return (ctx.endpoints[key] || fallback).replace(/\/+$/, '');
}

/** The ReelayError for a platform API answer that is an error status and says nothing more useful. */
export function statusFailure(platform: string, status: number, detail?: string): ReelayError {
  const why = detail ? ` (${detail})` : '';
  if (status === 404 || status === 410) return new ReelayError('content_not_found', `${platform} has no such content: it was deleted, is private or never existed${why}.`);
  if (status === 429) return rateLimited(platform);
  if (status === 401 || status === 403) return new ReelayError('upstream_error', `${platform} refused the request (${status})${why}.`);
  return new ReelayError('upstream_error', `${platform} answered with HTTP ${status}${why}.`);
}

export function rateLimited(platform: string): ReelayError {
  return new ReelayError('upstream_error', `${platform} is rate limiting requests (429); try again later.`);
}

// Readers for untyped JSON: each returns undefined unless the value has the expected type.
export const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
export function num(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.trim() ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** A frame rate written as a number or a fraction ("30000/1001"). */
export function frameRate(v: unknown): number | undefined {
  if (typeof v === 'string' && v.includes('/')) {
    const [a, b] = v.split('/').map(Number);
    return a > 0 && b > 0 ? Math.round((a / b) * 1000) / 1000 : undefined;
  }
  const n = num(v);
  return n && n > 0 ? n : undefined;
}

/** A URL as written by an API (absolute, protocol-relative or a path) made absolute, or undefined. */
export function absolute(v: unknown, base: string): string | undefined {
  const raw = str(v)?.trim();
  if (!raw || !URL.canParse(raw, base)) return undefined;
  const url = new URL(raw, base);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

/** Plain text of an HTML fragment (a post body): tags dropped, entities decoded, spaces collapsed. */
export function htmlText(html: string | undefined): string | undefined {
  if (!html) return undefined;
  let text = '';
  const parser = new Parser(
    {
      ontext: (t) => void (text += t),
      onopentag: (name) => void (name === 'br' || name === 'p' ? (text += ' ') : undefined),
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return text.replace(/\s+/g, ' ').trim() || undefined;
}

/** A title from a post's text: its first line, shortened at a word near 120 characters. */
export function postTitle(text: string | undefined): string | undefined {
  const line = text?.split('\n').map((l) => l.trim()).find(Boolean);
  if (!line) return undefined;
  if (line.length <= 120) return line;
  const space = line.lastIndexOf(' ', 120);
  return `${line.slice(0, space > 60 ? space : 120)}…`;
}

/** The extension of a URL's path, lower case ('' when none): the extractors' one definition. */
export { urlExtension as extOf } from '../document.js';

/**
 * The HLS (or DASH) variants of a manifest a platform links to, as sources. `required` says whether
 * the manifest is the only way to the media: when the platform also gave progressive files, a
 * manifest that fails to load is logged and left out rather than failing the whole extraction.
 */
export async function manifestSources(ctx: ExtractContext, url: string, required: boolean, headers?: Record<string, string>): Promise<SourceDraft[]> {
  try {
    const items = await expandManifest(url, ctx, headers);
    return items.flatMap((item) => item.sources);
  } catch (err) {
    if (required || ctx.signal?.aborted) throw err;
    ctx.log?.('manifest left out', { url, error: err instanceof Error ? err.message : String(err) });
    return [];
  }
}
